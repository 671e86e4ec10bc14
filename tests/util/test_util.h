/* SPDX-License-Identifier: MIT */
/* What the test-util files share: their includes and each file's tests. */
#pragma once

#include "check_main.h"
#include "test_files.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sbx/cleanup.h"
#include "sbx/utf8.h"
#include "sbx/util.h"

/* The rest of the case "core", after test_util.c's tests: test_util_io.c. */
void util_io_tests(TCase *core);
/* The case "path": test_util_path.c. */
void util_path_cases(Suite *s);
