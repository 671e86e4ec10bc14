/* SPDX-License-Identifier: MIT */
/*
 * lib/util: errors, the log's escaping, sbx_buf, the cleanup macros and JSON
 * here; test_util_io.c and test_util_path.c hold the rest.
 */
#include "test_util.h"

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

static void add_cases(Suite *s)
{
	TCase *tc = SBX_TEST_CASE(s, "core", NULL, NULL, 0, error_first_message_wins,
				  error_return_is_always_a_failure, buf_grows_and_caps,
				  take_ptr_evaluates_once, free_all_frees_each_argument_once,
				  names_reach_the_terminal_escaped, buf_steal_hands_over,
				  json_parse_and_get, json_parse_rejects_bad_input);

	util_io_tests(tc);
	util_path_cases(s);
}

SBX_TEST_MAIN("util", add_cases)
