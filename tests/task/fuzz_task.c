/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the task.yaml and grading.yaml loaders and the
 * reference's task.json reader: any bytes must give a task or a one-line
 * error, never a crash, leak or hang; a task.json that converts must give
 * well-formed YAML.
 *   scripts/fuzz.sh 60 fuzz-task    (seeds: tests/data/fuzz/fuzz-task/)
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/task.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The loader's own "invalid YAML" error ("NAME:LINE:COL: invalid YAML: ..."),
 * not those words quoted from the task's text inside another error (a path
 * holding "invalid YAML" is refused for what the path is).
 */
static bool yaml_refused(const char *msg)
{
	const char *p = msg;

	for (int colons = 0; *p && colons < 3; p++)
		colons += *p == ':';
	return strncmp(p, " invalid YAML", 13) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_grading_spec spec = {0};
	sbx_task *t = NULL;

	if (sbx_task_parse("fuzz.yaml", NULL, (const char *)data, size, &t, &err) == 0) {
		if (!t || !t->id || !t->grading.n_cases)
			__builtin_trap();
		sbx_task_free(t);
	} else if (!err.msg[0] || strchr(err.msg, '\n')) {
		__builtin_trap(); /* every failure says why, on one line */
	}
	sbx_error_clear(&err);
	if (sbx_grading_spec_parse("fuzz.yaml", (const char *)data, size, &spec, &err) == 0 &&
	    spec.n_cases == 0)
		__builtin_trap();
	sbx_grading_spec_clear(&spec);
	sbx_error_clear(&err);
	{
		char *yaml = NULL;

		if (sbx_task_reference_parse("fuzz.json", NULL, (const char *)data, size, 0, &yaml,
					     &err) == 0) {
			sbx_error_clear(&err);
			/* The loader may refuse what the mapping does not check (a path it
			 * rejects), but never as malformed YAML: the quoting must hold. */
			if (sbx_task_parse("fuzz.json", NULL, yaml, strlen(yaml), &t, &err) == 0)
				sbx_task_free(t);
			else if (yaml_refused(err.msg) || strchr(err.msg, '\n'))
				__builtin_trap();
			free(yaml);
		} else if (!err.msg[0] || strchr(err.msg, '\n')) {
			__builtin_trap();
		}
	}
	return 0;
}
