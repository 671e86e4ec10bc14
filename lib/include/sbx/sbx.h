/* SPDX-License-Identifier: MIT */
#pragma once

/* The umbrella header of libsbx. Modules add their header here as they land. */

#include "sbx/util.h"
#include "sbx/labels.h"
#include "sbx/docker.h"
#include "sbx/docker_stream.h"
#include "sbx/sheet.h"
#include "sbx/task.h"
#include "sbx/image.h"
#include "sbx/provenance.h"
#include "sbx/result.h"
#include "sbx/warm.h"
#include "sbx/run.h"
#include "sbx/sweep.h"
#include "sbx/serve.h"
