/* SPDX-License-Identifier: MIT */
/*
 * What the test-docker-integration files share: their includes, the engine
 * and the run's labelled containers (test_docker_integration.c), and each
 * file's tests.
 */
#pragma once

#include "check_main.h"
#include "test_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sbx/sbx.h"
#include "sbx/docker_stream.h"
#include "testimage.h"

/* A client of the machine's engine (free it). */
sbx_docker *connect_engine(void);
/* A labelled container from the test image; cmd NULL-terminated. */
char *make_container(sbx_docker *d, sbx_docker_container_opts *o, const char **cmd);
/* A started container sleeping 120 s, hardened or not; its id (free it). */
char *running_sleeper(sbx_docker *d, bool hardened);
long ms_since(const struct timespec *t0);
/* Runs script with sh -c in the container id, checks its exit code; its stdout into out. */
void run_in(sbx_docker *d, const char *id, const char *script, int want_code, sbx_buf *out);

/* Each file's tests, added to the case "engine" after test_docker_integration.c's. */
void docker_io_tests(TCase *engine);	/* test_docker_integration_io.c */
void docker_build_tests(TCase *engine); /* test_docker_integration_build.c */
