/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: what the engine sends besides tars, fed in random splits: the
 * stdout/stderr frame demultiplexer, the JSON-lines progress parser, and
 * error bodies. Byte 0 chooses where the rest is split in two reads; the
 * stream starts at byte 1 (seeds: tests/data/fuzz/fuzz-docker-stream/).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "docker-internal.h"

static int sink(int stream, const char *p, size_t n, void *payload)
{
	size_t *total = payload;

	if (stream < 0 || stream > 2)
		abort();
	*total += n;
	return 0;
}

static int on_progress(const sbx_docker_progress *p, void *payload)
{
	if (!p->raw)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p;
	size_t split, total = 0;
	docker_demux m;
	docker_lines l;
	char *msg;

	if (size == 0)
		return 0;
	p = (const char *)data + 1;
	size--;
	split = data[0] % (size + 1);
	sbx_docker__demux_init(&m, false);
	if (sbx_docker__demux_feed(&m, p, split, sink, &total) == 0)
		sbx_docker__demux_feed(&m, p + split, size - split, sink, &total);
	if (total > size)
		abort();
	sbx_docker__lines_init(&l, on_progress, NULL);
	if (sbx_docker__lines_feed(&l, p, split) == 0 &&
	    sbx_docker__lines_feed(&l, p + split, size - split) == 0)
		sbx_docker__lines_finish(&l);
	sbx_docker__lines_done(&l);
	msg = sbx_docker__error_message(p, size);
	free(msg);
	return 0;
}
