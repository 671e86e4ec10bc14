-- wrk script for bench/mcp_bench.sh: tools/call read_cell over Streamable HTTP
-- with keep-alive, in the session whose id is in $MCP_SESSION.
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_cell",' ..
	'"arguments":{"file_path":"cash_flows.ods","sheet_name":"Sheet1","cell_reference":"B2"}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json"
wrk.headers["Mcp-Session-Id"] = os.getenv("MCP_SESSION")
wrk.headers["MCP-Protocol-Version"] = "2025-06-18"

function done(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("p50_ms %.3f\n", latency:percentile(50) / 1000))
	io.write(string.format("p99_ms %.3f\n", latency:percentile(99) / 1000))
	io.write(string.format("requests_per_s %.0f\n", summary.requests / (summary.duration / 1e6)))
	io.write(string.format("errors %d\n", e.connect + e.read + e.write + e.status + e.timeout))
end
