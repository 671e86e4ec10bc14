/* SPDX-License-Identifier: MIT */
#pragma once

#include "sbx/docker.h"

/*
 * Imports SBX_TEST_IMAGE (busybox from busybox-static, applet symlinks,
 * /tmp and /work, label sandboxctl.test=1) unless it exists. It stays for
 * the next run; CI starts without it and gets it here. Fails the calling
 * Check test on error.
 */
void test_image_ensure(sbx_docker *d);

/*
 * Removes every container labelled label ("key=value") on the default
 * engine, best effort: the tests' cleanup whatever happened.
 */
void test_remove_labelled(const char *label);
