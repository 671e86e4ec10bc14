/* SPDX-License-Identifier: MIT */
/*
 * recalculate: formula cells get computed values that a value-based grader
 * can see. The native evaluator (sbx/formula.h) goes first: it takes
 * milliseconds and needs no LibreOffice. Only a book using something it
 * does not compute goes through a LibreOffice headless round trip
 * (soffice --convert-to into a private temp dir with its own profile),
 * whose result replaces the file atomically only if it parses as a
 * spreadsheet. Without LibreOffice (the slim image) the native values are
 * kept and the cells it could not compute are named.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <strings.h>

#include "sbx/clock.h"
#include "sbx/file.h"
#include "sbx/formula.h"
#include "sbx/path.h"
#include "task_session.h"
#include "wbcache.h"
#include "workspace.h"

#define RECALC_TIMEOUT_S 180

extern char **environ;

static char *find_office(void)
{
	static const char *const names[] = {"soffice", "libreoffice"};
	const char *path = getenv("PATH");

	for (size_t i = 0; i < SBX_ELEMENTSOF(names); i++) {
		_cleanup_free_ char *copy = strdup(path ? path : "/usr/bin:/bin");
		char *save = NULL;

		for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir;
		     dir = strtok_r(NULL, ":", &save)) {
			char *full = NULL;
			if (asprintf(&full, "%s/%s", dir, names[i]) < 0)
				return NULL;
			if (access(full, X_OK) == 0) {
				/* The launcher itself: /usr/bin/soffice's script finds its
				 * directory with `ls -l`, which fails under gVisor (runsc 2022:
				 * statx(AT_NO_AUTOMOUNT) is EINVAL). */
				char *real = realpath(full, NULL);

				if (real) {
					free(full);
					return real;
				}
				return full;
			}
			free(full);
		}
	}
	return NULL;
}

static pthread_mutex_t office_lock = PTHREAD_MUTEX_INITIALIZER;
static char profile_dir[PATH_MAX];

static void make_profile_dir(void);

void recalc_cleanup(void)
{
	if (profile_dir[0])
		(void)sbx_path_remove_tree_at(AT_FDCWD, profile_dir);
}

/*
 * The LibreOffice user profile is made on first use and kept for the
 * server's life (creating one costs about a second per run); when it cannot
 * be made, each run uses a profile inside its own dir.
 */
static const char *profile_for(const char *run_dir)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, make_profile_dir);
	return profile_dir[0] ? profile_dir : run_dir;
}

static void make_profile_dir(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(profile_dir, sizeof(profile_dir), "%s/sbx-office-profile-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(profile_dir)) {
		profile_dir[0] = '\0';
		return;
	}
	atexit(recalc_cleanup);
}

static int slurp(const char *path, size_t max, char **data, size_t *len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	char *buf;
	size_t got;
	int r;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max)
		return -EFBIG;
	r = sbx_file_read_fd(fd, (size_t)st.st_size, &buf, &got);
	if (r < 0)
		return r;
	if (got != (size_t)st.st_size) {
		free(buf);
		return -EIO;
	}
	*data = buf;
	*len = got;
	return 0;
}

static int spit(const char *path, const char *data, size_t len)
{
	_cleanup_close_ int fd =
		open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0)
		return -errno;
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return 0;
}

/* Runs argv in its own process group with HOME=home; kills the group on timeout. */
static int run_office(char *const argv[], const char *home, const atomic_bool *cancelled)
{
	posix_spawnattr_t attr;
	posix_spawn_file_actions_t fa;
	sigset_t none;
	pid_t pid;
	int status = 0, r;
	_cleanup_free_ char *home_env = NULL;
	char **env;
	size_t n = 0;

	for (char **e = environ; *e; e++)
		n++;
	env = calloc(n + 2, sizeof(char *));
	if (!env || asprintf(&home_env, "HOME=%s", home) < 0) {
		free(env);
		return -ENOMEM;
	}
	n = 0;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "HOME=", 5) != 0)
			env[n++] = *e;
	env[n++] = home_env;
	sigemptyset(&none);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	r = posix_spawn(&pid, argv[0], &fa, &attr, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	free(env);
	if (r != 0)
		return -r;
	for (int waited = 0;; waited += 100) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (waited >= RECALC_TIMEOUT_S * 1000 || (cancelled && atomic_load(cancelled))) {
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -ETIMEDOUT;
		}
		nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
	}
	kill(-pid, SIGKILL); /* helper processes LibreOffice may leave */
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

static int count_formulas(const sbx_book *b, uint64_t *with_value, uint64_t *total)
{
	*with_value = *total = 0;
	for (size_t i = 0; i < sbx_book_sheet_count(b); i++) {
		sbx_sheet_iter it = SBX_SHEET_ITER_INIT;
		uint32_t r, c;
		sbx_cell cell;

		while (sbx_sheet_next(sbx_book_sheet(b, i), &it, &r, &c, &cell))
			if (cell.formula) {
				(*total)++;
				if (cell.kind != SBX_CELL_EMPTY)
					(*with_value)++;
			}
	}
	return 0;
}

/* Recalculates one file in place; fills out on failure (returns 0 either way, <0 on OOM). */
static int recalc_one(tool_context *ctx, const cJSON *args, uint64_t *with_value, uint64_t *total,
		      tool_result *out)
{
	const char *arg = sbx_json_get_string(args, "file_path", "");
	_cleanup_free_ char *office = find_office(), *data = NULL, *result = NULL;
	_cleanup_free_ char *in_path = NULL, *out_dir = NULL, *out_path = NULL, *profile = NULL;
	sbx_error err = SBX_ERROR_INIT;
	_cleanup_book_ sbx_book *book = NULL;
	char tmpl[] = "/tmp/sbx-recalc-XXXXXX";
	const char *tmp = getenv("TMPDIR"), *base, *rel, *fmt;
	_cleanup_free_ char *dir = NULL;
	size_t len = 0, result_len = 0;
	struct stat st;
	wb_handle h;
	int r;

	if (!office)
		return tool_fail(out, TOOL_E_UNAVAILABLE,
				 "LibreOffice (soffice) is not installed in this sandbox");
	/* Validate the path and that it is a spreadsheet, then let go of the lock. */
	if (wb_open(ctx, args, &h, out) < 0)
		return 0;
	fmt = sbx_book_format(h.book) == SBX_FORMAT_XLSX ? "xlsx" : "ods";
	wb_close(&h);
	rel = workspace_relative(ctx, arg, out);
	if (!rel)
		return 0;
	{
		tool_result ignore = {0};
		_cleanup_close_ int fd = workspace_open_regular(ctx, arg, &st, &ignore);
		tool_result_clear(&ignore);
		if (fd < 0)
			return tool_fail(out, TOOL_E_ARGUMENT, "File not found: %s", arg);
		data = malloc((size_t)st.st_size + 1);
		if (!data)
			return -ENOMEM;
		while (len < (size_t)st.st_size) {
			ssize_t n = read(fd, data + len, (size_t)st.st_size - len);
			if (n <= 0)
				break;
			len += (size_t)n;
		}
	}
	if (tmp && *tmp && asprintf(&dir, "%s/sbx-recalc-XXXXXX", tmp) >= 0 && mkdtemp(dir)) {
		/* dir is ours */
	} else {
		free(dir);
		dir = strdup(mkdtemp(tmpl) ? tmpl : "");
	}
	if (!dir || !*dir)
		return tool_fail(out, TOOL_E_INTERNAL, "Cannot create a temp directory");
	base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	if (asprintf(&in_path, "%s/%s", dir, base) < 0 || asprintf(&out_dir, "%s/out", dir) < 0 ||
	    asprintf(&out_path, "%s/out/%s", dir, base) < 0 ||
	    asprintf(&profile, "-env:UserInstallation=file://%s%s", profile_for(dir),
		     profile_dir[0] ? "" : "/profile") < 0) {
		(void)sbx_path_remove_tree_at(AT_FDCWD, dir);
		return -ENOMEM;
	}
	r = spit(in_path, data, len);
	if (r == 0) {
		char *argv[] = {office,	 "--headless",	 "--norestore", "--nologo",
				profile, "--convert-to", (char *)fmt,	"--outdir",
				out_dir, in_path,	 NULL};
		/* One LibreOffice at a time: they share the profile (and would share the CPU). */
		pthread_mutex_lock(&office_lock);
		r = run_office(argv, dir, ctx->cancelled);
		pthread_mutex_unlock(&office_lock);
	}
	if (r == 0)
		r = slurp(out_path, 256u << 20, &result, &result_len);
	(void)sbx_path_remove_tree_at(AT_FDCWD, dir);
	if (r == -ETIMEDOUT)
		return tool_fail(out, TOOL_E_FAILED, "Recalculation timed out after %d seconds",
				 RECALC_TIMEOUT_S);
	if (r < 0)
		return tool_fail(out, TOOL_E_FAILED, "LibreOffice could not recalculate %s: %s",
				 arg, strerror(-r));
	if (sbx_book_open_memory(result, result_len, base, NULL, &book, &err) < 0)
		return tool_fail(out, TOOL_E_FAILED, "LibreOffice produced an unreadable file: %s",
				 sbx_error_message(&err));
	if (wb_replace_file(ctx, rel, result, result_len, &st, &err) < 0)
		return tool_fail(out, TOOL_E_ARGUMENT, "Cannot save %s: %s", arg,
				 sbx_error_message(&err));
	count_formulas(book, with_value, total);
	return 0;
}

/*
 * Recalculates the file natively. *done is false (file untouched) when some
 * formula is unsupported and keep_partial is false, so LibreOffice can do
 * it all. Returns 0 (out filled on failure) or -ENOMEM.
 */
static int recalc_native(tool_context *ctx, const cJSON *args, bool keep_partial,
			 sbx_recalc_stats *st, bool *done, tool_result *out)
{
	sbx_error err = SBX_ERROR_INIT;
	wb_handle h;
	int r;

	*done = false;
	if (wb_open(ctx, args, &h, out) < 0)
		return 0;
	r = sbx_book_recalc(h.book, NULL, st, &err);
	if (r < 0 || (st->unsupported && !keep_partial)) {
		wb_discard(&h);
		wb_close(&h);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			server_log(SBX_LOG_WARNING, "recalculate '%s': %s",
				   sbx_json_get_string(args, "file_path", ""),
				   sbx_error_message(&err));
		return 0;
	}
	if (wb_save(ctx, &h, out) < 0) {
		wb_close(&h);
		return 0;
	}
	wb_close(&h);
	*done = true;
	return 0;
}

/* Native first; LibreOffice for what that cannot compute, when installed. */
static int recalc_file(tool_context *ctx, const cJSON *args, const char **method,
		       sbx_recalc_stats *st, uint64_t *with_value, uint64_t *total,
		       tool_result *out)
{
	_cleanup_free_ char *office = find_office();
	bool done;
	int r;

	r = recalc_native(ctx, args, !office, st, &done, out);
	if (r < 0 || out->error_kind != TOOL_OK)
		return r;
	if (done) {
		*method = "native";
		*total = st->formulas;
		*with_value = st->formulas - st->unsupported;
		return 0;
	}
	*method = "libreoffice";
	return recalc_one(ctx, args, with_value, total, out);
}

static int recalculate(tool_context *ctx, const cJSON *args, tool_result *out)
{
	uint64_t with_value = 0, total = 0;
	sbx_recalc_stats st = {0};
	const char *method = "none";
	int r = recalc_file(ctx, args, &method, &st, &with_value, &total, out);

	if (r < 0 || out->error_kind != TOOL_OK)
		return r;
	out->structured = cJSON_CreateObject();
	if (!out->structured)
		return -ENOMEM;
	cJSON_AddBoolToObject(out->structured, "success", true);
	cJSON_AddStringToObject(out->structured, "file_path",
				sbx_json_get_string(args, "file_path", ""));
	cJSON_AddNumberToObject(out->structured, "formulas", (double)total);
	cJSON_AddNumberToObject(out->structured, "formulas_with_values", (double)with_value);
	cJSON_AddStringToObject(out->structured, "method", method);
	if (st.unsupported && strcmp(method, "native") == 0)
		cJSON_AddStringToObject(out->structured, "unsupported", st.why);
	return 0;
}

static bool spreadsheet_name(const char *name)
{
	const char *dot = strrchr(name, '.');

	return dot && (strcasecmp(dot, ".ods") == 0 || strcasecmp(dot, ".xlsx") == 0);
}

void recalc_pending(tool_context *ctx, cJSON *recalculated, cJSON *summary)
{
	_cleanup_json_ cJSON *status = task_session_status(ctx->task);
	uint64_t native = 0, office = 0;
	cJSON *unsupported = cJSON_CreateArray();
	const cJSON *f;

	cJSON_ArrayForEach (f, sbx_json_get(status, "files_modified")) {
		_cleanup_json_ cJSON *args = cJSON_CreateObject();
		uint64_t with_value = 0, total = 0, missing = 0;
		sbx_recalc_stats st = {0};
		const char *method = "none";
		tool_result out = {0};
		wb_handle h;
		double t0 = sbx_now_msf();

		if (!cJSON_IsString(f) || !spreadsheet_name(f->valuestring) || !args ||
		    sbx_json_add_string(args, "file_path", f->valuestring) < 0)
			continue;
		if (wb_open(ctx, args, &h, &out) < 0) {
			tool_result_clear(&out);
			continue;
		}
		sbx_book_count_formulas(h.book, &total, &missing);
		wb_close(&h);
		if (missing == 0)
			continue;
		if (recalc_file(ctx, args, &method, &st, &with_value, &total, &out) == 0 &&
		    out.error_kind == TOOL_OK) {
			/* Native with cells left over: only when no LibreOffice could do them. */
			bool partial = st.unsupported && strcmp(method, "native") == 0;

			cJSON_AddItemToArray(recalculated, cJSON_CreateString(f->valuestring));
			if (strcmp(method, "native") == 0)
				native += st.computed;
			else
				office += total;
			if (partial && unsupported)
				cJSON_AddItemToArray(unsupported, cJSON_CreateString(st.why));
			server_log(SBX_LOG_INFO,
				   "complete: '%s': %s recalculation of %llu formula cells in %.1f "
				   "ms%s%s",
				   f->valuestring, method, (unsigned long long)total,
				   sbx_now_msf() - t0, partial ? "; not computed: " : "",
				   partial ? st.why : "");
		} else {
			server_log(SBX_LOG_WARNING, "complete: recalculating '%s' failed: %s",
				   f->valuestring, out.error ? out.error : "out of memory");
		}
		tool_result_clear(&out);
	}
	if (!summary) {
		cJSON_Delete(unsupported);
		return;
	}
	cJSON_AddStringToObject(summary, "method",
				office	 ? (native ? "native+libreoffice" : "libreoffice")
				: native ? "native"
					 : "none");
	cJSON_AddNumberToObject(summary, "native", (double)native);
	cJSON_AddNumberToObject(summary, "libreoffice", (double)office);
	if (unsupported)
		cJSON_AddItemToObject(summary, "unsupported", unsupported);
}

static const tool_def tools[] = {
	TOOL_DEF(recalculate, .title = "Recalculate formulas",
		 .description = "Recalculates every formula and saves the file, so formula cells "
				"carry computed values: natively (milliseconds) for the common "
				"functions, with LibreOffice (headless, a few seconds) for the "
				"rest where it is installed.",
		 .input_schema = "{\"type\":\"object\",\"properties\":{\"file_path\":{\"type\":"
				 "\"string\",\"minLength\":1}},\"required\":[\"file_path\"],"
				 "\"additionalProperties\":false}",
		 .output_schema = "{\"type\":\"object\",\"properties\":{\"success\":{\"type\":"
				  "\"boolean\"},\"formulas\":{\"type\":\"integer\"},"
				  "\"formulas_with_values\":{\"type\":\"integer\"},"
				  "\"method\":{\"type\":\"string\"},"
				  "\"unsupported\":{\"type\":\"string\"}},"
				  "\"required\":[\"success\"]}",
		 .annotations = TOOL_DESTRUCTIVE | TOOL_IDEMPOTENT),
};

const tool_def *recalc_tools(size_t *n_out)
{
	*n_out = SBX_ELEMENTSOF(tools);
	return tools;
}
