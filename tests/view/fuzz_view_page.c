/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the run page: any bytes, taken as a run's
 * transcript.jsonl, model.jsonl, grade.json and trajectory.json at once, must render a page
 * whose only <script> is ours and whose only <img> are our screenshots: no
 * agent-written byte becomes markup. Never a crash, leak or hang.
 *   scripts/fuzz.sh 60 fuzz-view-page    (seeds: tests/data/fuzz/fuzz-view-page/)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sbx/path.h"
#include "sbx/view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static char dir[] = "/tmp/fuzz-view-XXXXXX";

static void remove_dir(void)
{
	static const char *files[] = {"result.json", "transcript.jsonl", "model.jsonl",
				      "grade.json", "trajectory.json"};
	char path[64];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int rootfd = -1;
	static const char *names[] = {"fuzz"};
	static const char result[] = "{\"run_id\":\"f\",\"status\":\"partial\",\"task\":\"t\"}";
	sbx_view_ctx ctx = {.rootfds = &rootfd,
			    .root_names = names,
			    .n_roots = 1,
			    .prefix = "/t/",
			    .nonce = "n"};
	sbx_buf page = SBX_BUF_INIT(256u << 20);

	if (rootfd < 0) {
		if (!mkdtemp(dir))
			abort();
		atexit(remove_dir);
		rootfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rootfd < 0)
			abort();
	}
	if (sbx_path_write_beneath(dir, "result.json", result, sizeof(result) - 1, NULL) < 0 ||
	    sbx_path_write_beneath(dir, "transcript.jsonl", data, size, NULL) < 0 ||
	    sbx_path_write_beneath(dir, "model.jsonl", data, size, NULL) < 0 ||
	    sbx_path_write_beneath(dir, "grade.json", data, size, NULL) < 0 ||
	    sbx_path_write_beneath(dir, "trajectory.json", data, size, NULL) < 0)
		abort();
	if (sbx_view_page_run(&ctx, 0, "", &page, NULL) == 0) {
		const char *html = sbx_buf_str(&page);

		if (count(html, "<script") != 1 || !strstr(html, "<script nonce=\"n\">") ||
		    count(html, "<img") != count(html, "<img class=\"shot\"") ||
		    strstr(html, "=\"javascript:") || count(html, "<iframe") ||
		    count(html, "<svg") > 1)
			__builtin_trap();
	}
	sbx_buf_free(&page);
	return 0;
}
