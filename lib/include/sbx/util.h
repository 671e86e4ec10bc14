/* SPDX-License-Identifier: MIT */
#pragma once

/* The base layer: everything else may use it; it uses nothing above it. */

#include "sbx/error.h"
#include "sbx/base64.h"
#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/clock.h"
#include "sbx/connguard.h"
#include "sbx/file.h"
#include "sbx/hostguard.h"
#include "sbx/json.h"
#include "sbx/log.h"
#include "sbx/path.h"
#include "sbx/suggest.h"
#include "sbx/thread.h"
#include "sbx/utf8.h"
