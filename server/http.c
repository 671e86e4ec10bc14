/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include "server.h"

int http_serve(server *srv, const http_options *opt, sbx_error *err)
{
	return sbx_error_set(err, -ENOSYS, "HTTP not built yet");
}
