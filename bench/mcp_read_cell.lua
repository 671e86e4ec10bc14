-- wrk script for bench/mcp_bench.sh: tools/call read_cell over Streamable HTTP
-- with keep-alive. $MCP_PROTOCOL 2026-07-28: the stateless revision (the
-- envelope in params._meta, the routing headers, no session); otherwise
-- 2025-06-18 in the session whose id is in $MCP_SESSION.
local args = '"arguments":{"file_path":"cash_flows.ods","sheet_name":"Sheet1","cell_reference":"B2"}'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json"
if os.getenv("MCP_PROTOCOL") == "2026-07-28" then
	wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_cell",' ..
		args .. ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' ..
		'"io.modelcontextprotocol/clientCapabilities":{}}}}'
	wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
	wrk.headers["Mcp-Method"] = "tools/call"
	wrk.headers["Mcp-Name"] = "read_cell"
else
	wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_cell",' ..
		args .. '}}'
	wrk.headers["Mcp-Session-Id"] = os.getenv("MCP_SESSION")
	wrk.headers["MCP-Protocol-Version"] = "2025-06-18"
end

function done(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("p50_ms %.3f\n", latency:percentile(50) / 1000))
	io.write(string.format("p99_ms %.3f\n", latency:percentile(99) / 1000))
	io.write(string.format("requests_per_s %.0f\n", summary.requests / (summary.duration / 1e6)))
	io.write(string.format("errors %d\n", e.connect + e.read + e.write + e.status + e.timeout))
end
