/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The labels sandboxctl puts on every Docker object it creates, so `ps` and
 * `gc` can find them and tell whose they are. Everyone uses these names; no
 * other file spells a label out.
 */

#include <stdbool.h>

#include "sbx/error.h"

/* Containers (and the run's other objects). */
#define SBX_LABEL_RUN_ID   "sandboxctl.run-id"	 /* the run id, e.g. "20261202-140501-3f9a" */
#define SBX_LABEL_TASK	   "sandboxctl.task"	 /* task name, e.g. "banking_reserve" */
#define SBX_LABEL_OWNER	   "sandboxctl.owner"	 /* "<hostname>:<pid>:<start-ticks>", see below */
#define SBX_LABEL_CREATED  "sandboxctl.created"	 /* unix seconds, decimal */
#define SBX_LABEL_DEADLINE "sandboxctl.deadline" /* unix seconds, decimal; optional */
/* Objects made by tests carry "sandboxctl.test=1" and are removed by their test. */
#define SBX_LABEL_TEST "sandboxctl.test"

/*
 * Images: sandbox images carry "sandboxctl.image=<flavour>", the flavour being
 * SBX_IMAGE_FLAVOUR_FULL or SBX_IMAGE_FLAVOUR_SLIM; `doctor` looks for them.
 */
#define SBX_LABEL_IMAGE	       "sandboxctl.image"
#define SBX_IMAGE_FULL	       "sandboxctl/sandbox:latest"
#define SBX_IMAGE_SLIM	       "sandboxctl/sandbox-slim:latest"
#define SBX_IMAGE_FLAVOUR_FULL "full"
#define SBX_IMAGE_FLAVOUR_SLIM "slim"

/* The image the integration tests build for themselves (busybox only). */
#define SBX_TEST_IMAGE "sandboxctl-test/busybox:latest"

/*
 * Owner strings say which process created a container:
 * "<hostname>:<pid>:<start-ticks>", start-ticks being field 22 of
 * /proc/<pid>/stat (clock ticks since boot). The start time makes the string
 * unique even after the pid is reused, so gc can tell "gone" from "alive".
 */

/* Writes the owner string of the calling process into *out (free() it). */
int sbx_label_owner_self(char **out, sbx_error *err);

/* As above for any local pid; -ESRCH when the process does not exist. */
int sbx_label_owner_of_pid(int pid, char **out, sbx_error *err);

/*
 * Is the process named by owner gone? Writes *gone:
 *   true   same host, and no process with that pid and start time exists;
 *   false  the process is alive, or the owner is on another host or cannot be
 *          parsed (we cannot know, so we never call it gone).
 * Returns 0, or a negative errno on a local error (reading /proc).
 */
int sbx_label_owner_gone(const char *owner, bool *gone, sbx_error *err);
