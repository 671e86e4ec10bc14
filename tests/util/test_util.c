/* SPDX-License-Identifier: MIT */
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

START_TEST(error_first_message_wins)
{
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_eq(sbx_error_set(&err, -ENOENT, "file '%s' missing", "a"), -ENOENT);
	ck_assert_int_eq(sbx_error_set(&err, -EIO, "generic"), -EIO);
	ck_assert_str_eq(err.msg, "file 'a' missing");
	ck_assert_int_eq(err.code, -ENOENT);
	sbx_error_prefix(&err, -EIO, "task 'x'");
	ck_assert_str_eq(sbx_error_message(&err), "task 'x': file 'a' missing");
	sbx_error_replace(&err, -EPERM, "line\nbreak");
	ck_assert_str_eq(err.msg, "line break");
	sbx_error_clear(&err);
	ck_assert_str_eq(sbx_error_message(&err), "no error");
	ck_assert_int_eq(sbx_error_set(NULL, -EINVAL, "ignored"), -EINVAL);
}
END_TEST

/* -errno read after a call that left errno at 0: still a failure, never success. */
START_TEST(error_return_is_always_a_failure)
{
	sbx_error err = SBX_ERROR_INIT;

	errno = 0;
	ck_assert_int_eq(sbx_error_set(&err, -errno, "open: %s", "x"), -EIO);
	ck_assert_int_eq(sbx_error_set(NULL, 0, "ignored"), -EIO);
	ck_assert_int_eq(sbx_error_replace(&err, 0, "again"), -EIO);
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_error_prefix(&err, 0, "context"), -EIO);
	ck_assert_int_eq(sbx_error_prefix(NULL, 7, "context"), -EIO);
	/* A negative code passes through untouched. */
	ck_assert_int_eq(sbx_error_prefix(&err, -ENOENT, "more"), -ENOENT);
}
END_TEST

static char logged[2048];

static void keep_log(int level, const char *msg, void *payload)
{
	(void)level;
	(void)payload;
	snprintf(logged, sizeof(logged), "%s", msg);
}

START_TEST(names_reach_the_terminal_escaped)
{
	char out[256];
	sbx_error err = SBX_ERROR_INIT;

	/* A refused output name that would recolour or retitle the terminal. */
	sbx_escape_controls(out, sizeof(out), "a\x1b[31mred\x1b]0;t\x07\x7f\n", false);
	ck_assert_str_eq(out, "a\\x1b[31mred\\x1b]0;t\\x07\\x7f\\x0a");
	/* UTF-8 stays; C1 controls (CSI U+009B) and stray bytes do not. */
	sbx_escape_controls(out, sizeof(out),
			    "caf\xc3\xa9 \xc2\x9b"
			    "2J \xff\x80 \xe2\x82",
			    false);
	ck_assert_str_eq(out, "caf\xc3\xa9 \\u009b2J \\xff\\x80 \\xe2\\x82");
	/* Bidi overrides and isolates ("Trojan Source") would reorder what is shown. */
	sbx_escape_controls(
		out, sizeof(out),
		"a\xe2\x80\xaegnp.exe\xe2\x81\xa6x\xe2\x81\xa9\xe2\x80\x8f \xe2\x82\xac", false);
	ck_assert_str_eq(out, "a\\u202egnp.exe\\u2066x\\u2069\\u200f \xe2\x82\xac");
	/* A bidi override would show "PASS" for "SSAP": U+202E, U+2066, U+200F, U+061C. */
	sbx_escape_controls(out, sizeof(out),
			    "\xe2\x80\xae"
			    "SSAP \xe2\x81\xa6x\xe2\x80\x8fy\xd8\x9c \xe2\x80\x94",
			    false);
	ck_assert_str_eq(out, "\\u202eSSAP \\u2066x\\u200fy\\u061c \xe2\x80\x94");
	sbx_escape_controls(out, sizeof(out), "two\n\tlines\r", true);
	ck_assert_str_eq(out, "two\n\tlines\\x0d");
	/* Never past the buffer, never half an escape. */
	ck_assert_uint_eq(sbx_escape_controls(out, 6, "ab\x1b", false), 2);
	ck_assert_str_eq(out, "ab");
	sbx_error_set(&err, -EINVAL, "refused '%s'", "x\x1b[2J");
	ck_assert_str_eq(err.msg, "refused 'x\\x1b[2J'");
	sbx_log_set(keep_log, NULL, SBX_LOG_DEBUG);
	sbx_log_warning("extract: refused '%s'", "\x1b]52;c;cGF5bG9hZA==\x07");
	sbx_log_set(NULL, NULL, SBX_LOG_INFO);
	ck_assert_str_eq(logged, "extract: refused '\\x1b]52;c;cGF5bG9hZA==\\x07'");
}
END_TEST

START_TEST(buf_grows_and_caps)
{
	sbx_buf b = SBX_BUF_INIT(16);

	ck_assert_int_eq(sbx_buf_puts(&b, "hello"), 0);
	ck_assert_int_eq(sbx_buf_printf(&b, " %d", 42), 0);
	ck_assert_str_eq(sbx_buf_str(&b), "hello 42");
	ck_assert_uint_eq(b.len, 8);
	ck_assert_int_eq(sbx_buf_puts(&b, "0123456789"), -ENOBUFS);
	/* A failed append frees the buffer: no half-built value. */
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_int_eq(sbx_buf_append(&b, "0123456789abcdef", 16), 0);
	ck_assert_int_eq(sbx_buf_putc(&b, 'x'), -ENOBUFS);
	sbx_buf_free(&b);
	/* No cap at all: max + 1 must not wrap to a zero-byte realloc (it freed the data). */
	sbx_buf_init(&b, SIZE_MAX);
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(sbx_buf_puts(&b, "0123456789"), 0);
	ck_assert_uint_eq(b.len, 1000);
	ck_assert_uint_eq(strlen(sbx_buf_str(&b)), 1000);
	sbx_buf_free(&b);
}
END_TEST

START_TEST(buf_steal_hands_over)
{
	sbx_buf b = SBX_BUF_INIT(1024);
	size_t len = 99;
	char *s = sbx_buf_steal(&b, &len);

	ck_assert_str_eq(s, "");
	ck_assert_uint_eq(len, 0);
	free(s);
	sbx_buf_puts(&b, "abc");
	s = sbx_buf_steal(&b, &len);
	ck_assert_str_eq(s, "abc");
	ck_assert_uint_eq(len, 3);
	ck_assert_ptr_null(b.data);
	free(s);
}
END_TEST

/* TAKE_PTR names its argument once: taking p[--n] pops exactly one. */
START_TEST(take_ptr_evaluates_once)
{
	char a = 'a', b = 'b', *stack[2] = {&a, &b};
	size_t n = 2;
	char *top = TAKE_PTR(stack[--n]);

	ck_assert_ptr_eq(top, &b);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_null(stack[1]);
	ck_assert_ptr_eq(stack[0], &a);
}
END_TEST

static size_t free_all_reads;

static void *read_once(void *p)
{
	free_all_reads++;
	return p;
}

/*
 * sbx_free_all reads each argument once, all before it frees anything (so a
 * struct may go last, after its members), and skips NULLs; the strv
 * destructors accept NULL. A leak or a use after free would show under the
 * valgrind and sanitizer runs of this suite.
 */
START_TEST(free_all_frees_each_argument_once)
{
	struct holder {
		char *name;
	} *h = malloc(sizeof(*h));
	char **strv = calloc(3, sizeof(*strv));
	char **counted = calloc(2, sizeof(*counted));

	ck_assert_ptr_nonnull(h);
	h->name = strdup("member");
	free_all_reads = 0;
	sbx_free_all(read_once(h->name), read_once(NULL), read_once(h));
	ck_assert_uint_eq(free_all_reads, 3);
	sbx_free_all(NULL);

	ck_assert_ptr_nonnull(strv);
	strv[0] = strdup("x");
	strv[1] = strdup("y");
	sbx_strv_free(strv);
	sbx_strv_free(NULL);

	ck_assert_ptr_nonnull(counted);
	counted[0] = strdup("only the first n are strings");
	sbx_strv_free_n(counted, 1);
	sbx_strv_free_n(NULL, 5);
}
END_TEST

START_TEST(json_parse_and_get)
{
	_cleanup_json_ cJSON *root = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const char *text = "{\"a\":\"x\",\"n\":3.5,\"b\":true,\"o\":{\"k\":1}}  \n";

	ck_assert_int_eq(sbx_json_parse(text, strlen(text), &root, &err), 0);
	ck_assert_str_eq(sbx_json_get_string(root, "a", NULL), "x");
	ck_assert_double_eq(sbx_json_get_number(root, "n", 0), 3.5);
	ck_assert(sbx_json_get_bool(root, "b", false));
	ck_assert_str_eq(sbx_json_get_string(root, "missing", "fb"), "fb");
	ck_assert_str_eq(sbx_json_get_string(root, "n", "fb"), "fb");
	ck_assert_double_eq(sbx_json_get_number(sbx_json_get(root, "o"), "k", 0), 1);
	ck_assert_double_eq(sbx_json_get_number(NULL, "k", 7), 7);
}
END_TEST

START_TEST(json_parse_rejects_bad_input)
{
	cJSON *root = NULL;
	sbx_error err = SBX_ERROR_INIT;
	size_t deep = 10000;
	char *nest = malloc(deep * 2);

	ck_assert_int_eq(sbx_json_parse("{\"a\":", 5, &root, &err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "invalid JSON at byte"));
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_json_parse("{} x", 4, &root, &err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "trailing data at byte 3"));
	sbx_error_clear(&err);
	memset(nest, '[', deep);
	memset(nest + deep, ']', deep);
	ck_assert_int_eq(sbx_json_parse(nest, deep * 2, &root, &err), -E2BIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "nesting deeper than"));
	ck_assert_ptr_null(root);
	free(nest);
}
END_TEST

static bool have_openat2(void)
{
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC};
	long fd = syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof(how));

	if (fd >= 0)
		close((int)fd);
	return fd >= 0;
}

START_TEST(path_confines)
{
	sbx_error err = SBX_ERROR_INIT;
	int fd;

	fd = sbx_path_open_beneath(sbx_test_scratch_fd, "a.txt", O_WRONLY | O_CREAT, 0644, false,
				   &err);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(sbx_path_open_beneath(sbx_test_scratch_fd, "../etc/passwd", O_RDONLY, 0,
					       false, &err),
			 -EXDEV);
	ck_assert_ptr_nonnull(strstr(err.msg, "'..' is not allowed"));
	sbx_error_clear(&err);
	ck_assert_int_eq(
		sbx_path_open_beneath(sbx_test_scratch_fd, "/etc/passwd", O_RDONLY, 0, false, &err),
		-EXDEV);
	sbx_error_clear(&err);
	/* A symlink pointing out is refused by the kernel, not by string checks. */
	ck_assert_int_eq(symlinkat("/etc/passwd", sbx_test_scratch_fd, "evil"), 0);
	/* -EXDEV from openat2; -ELOOP from the no-symlinks fallback (valgrind, old kernels). */
	fd = sbx_path_open_beneath(sbx_test_scratch_fd, "evil", O_RDONLY, 0, false, &err);
	ck_assert(fd == -EXDEV || fd == -ELOOP);
	ck_assert_ptr_nonnull(strstr(err.msg, "'evil'"));
	sbx_error_clear(&err);
	ck_assert_int_eq(symlinkat("a.txt", sbx_test_scratch_fd, "inside"), 0);
	fd = sbx_path_open_beneath(sbx_test_scratch_fd, "inside", O_RDONLY, 0, false, &err);
	if (have_openat2()) {
		ck_assert_int_ge(fd, 0);
		close(fd);
	} else {
		ck_assert_int_eq(fd, -ELOOP); /* the fallback follows no symlink at all */
	}
	ck_assert_int_eq(
		sbx_path_open_beneath(sbx_test_scratch_fd, "inside", O_RDONLY, 0, true, &err),
		-ELOOP);
}
END_TEST

START_TEST(path_mkdirs_refuses_symlinked_dirs)
{
	sbx_error err = SBX_ERROR_INIT;
	int fd;

	fd = sbx_path_mkdirs_beneath(sbx_test_scratch_fd, "x/y/z", 0755, &err);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(symlinkat("/tmp", sbx_test_scratch_fd, "out"), 0);
	ck_assert_int_lt(sbx_path_mkdirs_beneath(sbx_test_scratch_fd, "out/sub", 0755, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "out/sub"));
}
END_TEST

START_TEST(path_write_beneath_confines)
{
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_eq(
		sbx_path_write_beneath(sbx_test_scratch, "out/deep/x.ods", "data", 4, &err), 0);
	sbx_test_assert_file(sbx_test_scratch, "out/deep/x.ods", "data");
	ck_assert_int_eq(sbx_path_write_beneath(sbx_test_scratch, "../escape", "x", 1, &err),
			 -EXDEV);
	sbx_error_clear(&err);
	/* A symlinked directory on the way is refused, not followed. */
	ck_assert_int_eq(symlinkat("/tmp", sbx_test_scratch_fd, "link"), 0);
	ck_assert_int_lt(sbx_path_write_beneath(sbx_test_scratch, "link/escape", "x", 1, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "link"));
}
END_TEST

START_TEST(path_write_atomic_replaces)
{
	sbx_error err = SBX_ERROR_INIT;
	char path[128];

	snprintf(path, sizeof(path), "%s/result.json", sbx_test_scratch);
	ck_assert_int_eq(sbx_path_write_atomic(path, "one", 3, &err), 0);
	ck_assert_int_eq(sbx_path_write_atomic(path, "two!", 4, &err), 0);
	sbx_test_assert_file(sbx_test_scratch, "result.json", "two!");
}
END_TEST

START_TEST(file_read_capped_reads_and_refuses)
{
	sbx_error err = SBX_ERROR_INIT;
	char *data = NULL;
	size_t len = 0;

	sbx_test_put(sbx_test_scratch, "five.txt", "hello");
	ck_assert_int_eq(
		sbx_file_read_capped(sbx_test_scratch_fd, "five.txt", 5, &data, &len, &err), 0);
	ck_assert_uint_eq(len, 5);
	ck_assert_str_eq(data, "hello"); /* NUL-terminated */
	free(data);
	data = NULL;
	/* One byte over the cap is refused, and nothing is handed out. */
	ck_assert_int_eq(
		sbx_file_read_capped(sbx_test_scratch_fd, "five.txt", 4, &data, &len, &err),
		-EFBIG);
	ck_assert_str_eq(err.msg, "'five.txt': larger than 4 bytes (limit)");
	ck_assert_ptr_null(data);
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_file_read_capped(sbx_test_scratch_fd, ".", 1024, &data, &len, &err),
			 -EINVAL);
	ck_assert_str_eq(err.msg, "'.': not a regular file");
	sbx_error_clear(&err);
	ck_assert_int_eq(
		sbx_file_read_capped(sbx_test_scratch_fd, "missing", 1024, &data, &len, &err),
		-ENOENT);
	ck_assert_ptr_nonnull(strstr(err.msg, "'missing': cannot open"));
	ck_assert_ptr_null(data);
}
END_TEST

START_TEST(file_read_fd_stops_at_end_of_file)
{
	char *data = NULL;
	size_t len = 99;
	int fd;

	fd = openat(sbx_test_scratch_fd, "short.txt", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "abc", 3), 3);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	/* The file is shorter than the size asked for (it shrank after fstat). */
	ck_assert_int_eq(sbx_file_read_fd(fd, 4096, &data, &len), 0);
	ck_assert_uint_eq(len, 3);
	ck_assert_str_eq(data, "abc");
	free(data);
	/* Empty: an empty string, not NULL. */
	ck_assert_int_eq(sbx_file_read_fd(fd, 0, &data, &len), 0);
	ck_assert_uint_eq(len, 0);
	ck_assert_str_eq(data, "");
	free(data);
	close(fd);
	/* A read error comes back as its errno and leaves the outputs alone. */
	data = NULL;
	ck_assert_int_eq(sbx_file_read_fd(sbx_test_scratch_fd, 16, &data, &len), -EISDIR);
	ck_assert_ptr_null(data);
}
END_TEST

START_TEST(suggest_finds_typos_only)
{
	static const char *const cmds[] = {"build", "run", "mcp", "grade", "tasks", NULL, "doctor"};
	size_t n = sizeof(cmds) / sizeof(cmds[0]);

	ck_assert_uint_eq(sbx_edit_distance("rnu", "run"), 1); /* a swap is one edit */
	ck_assert_uint_eq(sbx_edit_distance("", "abc"), 3);
	ck_assert_uint_eq(sbx_edit_distance("kitten", "sitting"), 3);
	ck_assert_str_eq(sbx_suggest("rnu", cmds, n), "run");
	ck_assert_str_eq(sbx_suggest("graed", cmds, n), "grade");
	ck_assert_str_eq(sbx_suggest("doctr", cmds, n), "doctor");
	ck_assert_str_eq(sbx_suggest("task", cmds, n), "tasks");
	/* Far from everything: no guess rather than a wrong one. */
	ck_assert_ptr_null(sbx_suggest("xyz", cmds, n));
	ck_assert_ptr_null(sbx_suggest("deploy", cmds, n));
	ck_assert_ptr_null(sbx_suggest("", cmds, n));
	ck_assert_str_eq(sbx_suggest("banking_reservee",
				     (const char *const[]){"sales_revenue", "banking_reserve"}, 2),
			 "banking_reserve");
	/* Long input is capped, not overflowed. */
	char big[200];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	ck_assert_uint_eq(sbx_edit_distance(big, "a"), 255);
	ck_assert_ptr_null(sbx_suggest(big, cmds, n));
}
END_TEST

START_TEST(clock_is_monotonic_and_sleeps)
{
	int64_t a = sbx_now_ms();
	double f = sbx_now_msf();

	/* One clock: the whole and the fractional reading agree to the millisecond. */
	ck_assert_int_le(a, (int64_t)f + 1);
	sbx_sleep_ms(20);
	ck_assert_int_ge(sbx_now_ms() - a, 20);
	ck_assert(sbx_now_msf() - f >= 20.0);
	/* Nothing to wait for: returns at once, never sleeps on a negative. */
	a = sbx_now_ms();
	sbx_sleep_ms(-5);
	sbx_sleep_ms(0);
	ck_assert_int_lt(sbx_now_ms() - a, 1000);
}
END_TEST

START_TEST(utf8_sequences_and_refusals)
{
	static const struct {
		const char *bytes;
		size_t left, want;
	} v[] = {
		{"a", 1, 1},
		{"\xc3\xa9", 2, 2},	    /* é */
		{"\xe2\x82\xac", 3, 3},	    /* € */
		{"\xf0\x9f\x98\x80", 4, 4}, /* an emoji */
		{"\xf4\x8f\xbf\xbf", 4, 4}, /* U+10FFFF */
		{"\xc3\xa9", 1, 0},	    /* truncated by left */
		{"\xe2\x82", SIZE_MAX, 0},  /* truncated by the NUL */
		{"\x80", 1, 0},		    /* a stray continuation byte */
		{"\xc0\xaf", 2, 0},	    /* overlong '/' */
		{"\xe0\x80\xaf", 3, 0},	    /* overlong, three bytes */
		{"\xf0\x80\x80\xaf", 4, 0}, /* overlong, four bytes */
		{"\xed\xa0\x80", 3, 0},	    /* a surrogate */
		{"\xf4\x90\x80\x80", 4, 0}, /* past U+10FFFF */
		{"\xf5\x80\x80\x80", 4, 0}, /* no such lead byte */
		{"x", 0, 0},		    /* nothing left */
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		ck_assert_msg(sbx_utf8_seq((const unsigned char *)v[i].bytes, v[i].left) ==
				      v[i].want,
			      "case %zu", i);
}
END_TEST

START_TEST(base64_round_trips_and_refuses)
{
	static const struct {
		const char *in, *out;
	} v[] = {
		{"", ""},
		{"f", "Zg=="},
		{"fo", "Zm8="},
		{"foo", "Zm9v"},
		{"foob", "Zm9vYg=="},
		{"fooba", "Zm9vYmE="},
		{"foobar", "Zm9vYmFy"},
	};
	static const char *bad[] = {"Zg=x", "Z", "Zm9vY", "Zg===", "Zm9v*", "Zg=\nZg=="};
	unsigned char bytes[7000];
	sbx_buf b = SBX_BUF_INIT(1 << 20);
	char *s;

	/* RFC 4648 section 10, both ways. */
	for (size_t i = 0; i < SBX_ELEMENTSOF(v); i++) {
		s = sbx_base64_encode(v[i].in, strlen(v[i].in));
		ck_assert_ptr_nonnull(s);
		ck_assert_str_eq(s, v[i].out);
		ck_assert_int_eq(sbx_base64_decode(s), (ssize_t)strlen(v[i].in));
		ck_assert_mem_eq(s, v[i].in, strlen(v[i].in));
		free(s);
	}
	/* Past one 3072-byte chunk of the buffer variant; every byte value. */
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (unsigned char)(i * 7 + 3);
	ck_assert_int_eq(sbx_base64_encode_buf(&b, bytes, sizeof(bytes)), 0);
	s = sbx_base64_encode(bytes, sizeof(bytes));
	ck_assert_str_eq(sbx_buf_str(&b), s);
	ck_assert_uint_eq(b.len, sbx_base64_encoded_len(sizeof(bytes)));
	ck_assert_int_eq(sbx_base64_decode(s), (ssize_t)sizeof(bytes));
	ck_assert_mem_eq(s, bytes, sizeof(bytes));
	free(s);
	sbx_buf_free(&b);
	/* Wrapped lines and missing padding decode; junk and data after padding do not. */
	s = strdup("Zm9v\r\nYmE");
	ck_assert_int_eq(sbx_base64_decode(s), 5);
	ck_assert_mem_eq(s, "fooba", 5);
	free(s);
	for (size_t i = 0; i < SBX_ELEMENTSOF(bad); i++) {
		s = strdup(bad[i]);
		ck_assert_msg(sbx_base64_decode(s) == -EINVAL, "'%s' decoded", bad[i]);
		free(s);
	}
	/* A cap too small for the encoding is the buffer's error, not a truncation. */
	sbx_buf_init(&b, 3);
	ck_assert_int_eq(sbx_base64_encode_buf(&b, "foo", 3), -ENOBUFS);
	sbx_buf_free(&b);
}
END_TEST

/* sbx_fd_wait: a quiet pipe times out, a readable one is ready, even at a past deadline. */
START_TEST(fd_wait_times_out_then_sees_data)
{
	int fds[2];
	int64_t t0;

	ck_assert_int_eq(pipe(fds), 0);
	t0 = sbx_now_ms();
	ck_assert_int_eq(sbx_fd_wait(fds[0], POLLIN, (long)t0 + 30), -ETIMEDOUT);
	ck_assert_int_ge(sbx_now_ms() - t0, 25);
	ck_assert_int_eq(sbx_fd_wait(fds[0], POLLIN, 0), -ETIMEDOUT);
	ck_assert_int_eq(write(fds[1], "x", 1), 1);
	ck_assert_int_eq(sbx_fd_wait(fds[0], POLLIN, -1), 0);
	ck_assert_int_eq(sbx_fd_wait(fds[0], POLLIN, 0), 0);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

START_TEST(write_all_writes_everything)
{
	char big[200000], back[sizeof(big)];
	size_t got = 0;
	int fds[2], status;
	pid_t pid;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i % 251);
	/* More than a pipe holds: the short writes are retried until it is all out. */
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		_exit(sbx_write_all(fds[1], big, sizeof(big)) == 0 ? 0 : 1);
	}
	close(fds[1]);
	while (got < sizeof(back)) {
		ssize_t n = read(fds[0], back + got, sizeof(back) - got);

		ck_assert_int_gt(n, 0);
		got += (size_t)n;
	}
	close(fds[0]);
	ck_assert_mem_eq(back, big, sizeof(big));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(sbx_write_all(-1, "x", 1), -EBADF);
	ck_assert_int_eq(sbx_write_all(-1, "", 0), 0);
}
END_TEST

START_TEST(pwrite_all_keeps_the_offset)
{
	char path[] = "/tmp/sbx-util-pwrite-XXXXXX", back[8] = {0};
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(sbx_pwrite_all(fd, "world", 5, 3), 0);
	ck_assert_int_eq(sbx_pwrite_all(fd, "abc", 3, 0), 0);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 0);
	ck_assert_int_eq(pread(fd, back, sizeof(back), 0), 8);
	ck_assert_mem_eq(back, "abcworld", 8);
	close(fd);
}
END_TEST

START_TEST(hostguard_refuses_rebound_names)
{
	char *extra[] = {"sandbox", "box.internal:8080"};
	/* The relay's rules: its own port, Host required. */
	const sbx_hostguard relay = {.port = 4711, .require_host = true};
	/* The server's: any port, Host optional, names from --allowed-host. */
	const sbx_hostguard srv = {.extra = extra, .n_extra = 2};
	const struct {
		const sbx_hostguard *g;
		const char *host, *origin;
		sbx_hostguard_verdict want;
	} v[] = {
		{&relay, "127.0.0.1:4711", NULL, SBX_HOSTGUARD_OK},
		{&relay, "LocalHost:4711", "http://[::1]:4711", SBX_HOSTGUARD_OK},
		{&relay, NULL, NULL, SBX_HOSTGUARD_BAD_HOST},
		{&relay, "127.0.0.1:4712", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&relay, "127.0.0.1", NULL, SBX_HOSTGUARD_BAD_HOST}, /* port 80 */
		{&relay, "evil.example:4711", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&relay, "127.0.0.1:4711", "http://evil.example:4711", SBX_HOSTGUARD_BAD_ORIGIN},
		{&relay, "127.0.0.1:4711", "http://localhost:3000", SBX_HOSTGUARD_BAD_ORIGIN},
		{&relay, "127.0.0.1:4711", "null", SBX_HOSTGUARD_BAD_ORIGIN},
		{&srv, NULL, NULL, SBX_HOSTGUARD_OK},
		{&srv, "localhost:8765", "http://localhost:3000", SBX_HOSTGUARD_OK},
		{&srv, "SANDBOX:1", "https://sandbox", SBX_HOSTGUARD_OK},
		{&srv, "box.internal:8080", NULL, SBX_HOSTGUARD_OK},
		{&srv, "evil.example", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&srv, "localhost.evil.example", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&srv, "127.0.0.1@evil.example", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&srv, "localhost:80x", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&srv, "localhost:99999999999999999999", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&srv, "[::1", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&srv, "", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&srv, "localhost", "http://localhost/path", SBX_HOSTGUARD_BAD_ORIGIN},
		{&srv, "localhost", "file://localhost", SBX_HOSTGUARD_BAD_ORIGIN},
		{&srv, "localhost", "http://evil.example", SBX_HOSTGUARD_BAD_ORIGIN},
	};

	for (size_t i = 0; i < SBX_ELEMENTSOF(v); i++)
		ck_assert_msg(sbx_hostguard_check(v[i].g, v[i].host, v[i].origin) == v[i].want,
			      "case %zu: Host '%s', Origin '%s'", i, v[i].host ? v[i].host : "-",
			      v[i].origin ? v[i].origin : "-");
}
END_TEST

/* True when the server's side of pair p was shut down (its peer reads end of file). */
static bool shut(const int p[2])
{
	char c;

	return recv(p[1], &c, 1, MSG_DONTWAIT) == 0;
}

START_TEST(connguard_evicts_the_idle_and_times_out_heads)
{
	_cleanup_(sbx_connguard_freep) sbx_connguard *g = NULL;
	int p[6][2];
	sbx_connguard_stats st;

	for (size_t i = 0; i < SBX_ELEMENTSOF(p); i++)
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p[i]), 0);
	ck_assert_int_eq(sbx_connguard_new(&g, 2, 400, NULL), 0);
	sbx_connguard_opened(g, p[0], p[0][0]);
	sbx_connguard_opened(g, p[1], p[1][0]);
	sbx_connguard_busy(g, p[1]);
	/* Past the slots: the one still waiting for a head goes, not the request under way. */
	sbx_connguard_opened(g, p[2], p[2][0]);
	ck_assert(shut(p[0]));
	ck_assert(!shut(p[1]) && !shut(p[2]));
	sbx_connguard_closed(g, p[0]);
	sbx_connguard_busy(g, p[2]);
	sbx_connguard_idle(g, p[2]);
	/* An idle keep-alive connection is next. */
	sbx_connguard_opened(g, p[3], p[3][0]);
	ck_assert(shut(p[2]) && !shut(p[1]) && !shut(p[3]));
	sbx_connguard_closed(g, p[2]);
	/* Every slot under way: the newcomer is the one refused. */
	sbx_connguard_busy(g, p[3]);
	sbx_connguard_opened(g, p[4], p[4][0]);
	ck_assert(shut(p[4]) && !shut(p[1]) && !shut(p[3]));
	sbx_connguard_closed(g, p[4]);
	/* No head within the deadline: ended by the watchdog; a request under way is not. */
	sbx_connguard_closed(g, p[3]);
	sbx_connguard_opened(g, p[5], p[5][0]);
	ck_assert(!shut(p[5]));
	sbx_sleep_ms(900);
	ck_assert(shut(p[5]) && !shut(p[1]));
	st = sbx_connguard_get_stats(g);
	ck_assert_uint_eq(st.evicted, 3);
	ck_assert_uint_eq(st.timed_out, 1);
	for (size_t i = 0; i < SBX_ELEMENTSOF(p); i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
}
END_TEST

/*
 * A tokenless request, answered 401 and lingering, goes before an idle
 * connection of a client with the token, even an older one (the reviewer's
 * attack: a flood of refused requests pushing the real client's keep-alive
 * connections out).
 */
START_TEST(connguard_evicts_the_refused_before_the_real_client)
{
	_cleanup_(sbx_connguard_freep) sbx_connguard *g = NULL;
	int p[3][2];

	for (size_t i = 0; i < SBX_ELEMENTSOF(p); i++)
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p[i]), 0);
	ck_assert_int_eq(sbx_connguard_new(&g, 2, 10000, NULL), 0);
	sbx_connguard_opened(g, p[0], p[0][0]); /* the real client: a request, then idle */
	sbx_connguard_busy(g, p[0]);
	sbx_connguard_idle(g, p[0]);
	sbx_sleep_ms(5);
	sbx_connguard_opened(g, p[1], p[1][0]); /* the attacker: refused, then "idle" */
	sbx_connguard_busy(g, p[1]);
	sbx_connguard_refused(g, p[1]);
	sbx_connguard_idle(g, p[1]);
	sbx_connguard_opened(g, p[2], p[2][0]);
	ck_assert(shut(p[1]) && !shut(p[0]) && !shut(p[2]));
	for (size_t i = 0; i < SBX_ELEMENTSOF(p); i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "core", NULL, NULL, 0, error_first_message_wins,
		      error_return_is_always_a_failure, buf_grows_and_caps, take_ptr_evaluates_once,
		      free_all_frees_each_argument_once, names_reach_the_terminal_escaped,
		      buf_steal_hands_over, json_parse_and_get, json_parse_rejects_bad_input,
		      suggest_finds_typos_only, clock_is_monotonic_and_sleeps,
		      base64_round_trips_and_refuses, utf8_sequences_and_refusals,
		      fd_wait_times_out_then_sees_data, write_all_writes_everything,
		      pwrite_all_keeps_the_offset, hostguard_refuses_rebound_names,
		      connguard_evicts_the_idle_and_times_out_heads,
		      connguard_evicts_the_refused_before_the_real_client);

	SBX_TEST_CASE(s, "path", sbx_test_scratch_open_setup, sbx_test_scratch_open_teardown, 0,
		      path_confines, path_mkdirs_refuses_symlinked_dirs, path_write_atomic_replaces,
		      path_write_beneath_confines, file_read_capped_reads_and_refuses,
		      file_read_fd_stops_at_end_of_file);
}

SBX_TEST_MAIN("util", add_cases)
