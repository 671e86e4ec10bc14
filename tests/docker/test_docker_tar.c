/* SPDX-License-Identifier: MIT */
/* Tar writing and SAFE extraction of hostile tars, in memory (no engine). */
#include "check_main.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docker-internal.h"
#include "test_files.h"

/* ------------------------------------------------ a raw ustar writer for hostile input */

static void octal(char *dst, size_t width, unsigned long long v)
{
	char tmpbuf[32];

	snprintf(tmpbuf, sizeof(tmpbuf), "%0*llo", (int)width - 1, v);
	memcpy(dst, tmpbuf, width - 1);
	dst[width - 1] = '\0';
}

/* Appends one header (and data, padded) to b. declared overrides the size field when > 0. */
static void raw_entry(sbx_buf *b, const char *name, char type, const char *link, const char *data,
		      unsigned long long declared, unsigned mode)
{
	unsigned char h[512] = {0};
	size_t len = data ? strlen(data) : 0;
	unsigned sum = 0;

	ck_assert_uint_lt(strlen(name), 100);
	memcpy(h, name, strlen(name));
	octal((char *)h + 100, 8, mode);
	octal((char *)h + 108, 8, 0);
	octal((char *)h + 116, 8, 0);
	octal((char *)h + 124, 12, declared ? declared : len);
	octal((char *)h + 136, 12, 1700000000);
	memset(h + 148, ' ', 8);
	h[156] = (unsigned char)type;
	if (link)
		memcpy(h + 157, link, strlen(link));
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	for (size_t i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	h[155] = ' ';
	ck_assert_int_eq(sbx_buf_append(b, h, 512), 0);
	if (len) {
		static const char zeros[512];
		ck_assert_int_eq(sbx_buf_append(b, data, len), 0);
		ck_assert_int_eq(sbx_buf_append(b, zeros, (512 - len % 512) % 512), 0);
	}
}

static void raw_end(sbx_buf *b)
{
	static const char zeros[1024];

	ck_assert_int_eq(sbx_buf_append(b, zeros, sizeof(zeros)), 0);
}

/* ------------------------------------------ fixture: tmp/target, ar */

static char tmp[64];
static char target[96];
/* Absolute paths the hostile entries aim at: inside tmp, so whatever else is
 * in /tmp cannot fail a test, and a write there is caught by assert_nothing_outside. */
static char abs_x[96];
static char abs_nowhere[96];
static int tdir = -1;
static sbx_buf ar; /* the archive a test builds */

static void setup(void)
{
	strcpy(tmp, "/tmp/sbx-tar-test.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(target, sizeof(target), "%s/target", tmp);
	snprintf(abs_x, sizeof(abs_x), "%s/x", tmp);
	snprintf(abs_nowhere, sizeof(abs_nowhere), "%s/nowhere", tmp);
	ck_assert_int_eq(mkdir(target, 0755), 0);
	tdir = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(tdir, 0);
	sbx_buf_init(&ar, 1 << 20);
}

static void teardown(void)
{
	if (tdir >= 0)
		close(tdir);
	tdir = -1;
	sbx_path_remove_tree_at(AT_FDCWD, tmp);
	sbx_buf_free(&ar);
}

/* Nothing but "target" may exist next to the target directory. */
static void assert_nothing_outside(void)
{
	sbx_test_assert_only(tmp, "target");
	ck_assert_int_ne(access(abs_x, F_OK), 0);
}

static char *slurp(const char *rel)
{
	static char buf[4096];
	int fd = openat(tdir, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	ck_assert_msg(fd >= 0, "'%s' missing", rel);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_ge(n, 0);
	buf[n] = '\0';
	return buf;
}

typedef struct refusals {
	int n;
	char names[32][128];
	char reasons[32][256];
} refusals;

static void on_refused(const char *entry, const char *reason, void *payload)
{
	refusals *r = payload;

	if (r->n < 32) {
		snprintf(r->names[r->n], 128, "%s", entry);
		snprintf(r->reasons[r->n], 256, "%s", reason);
	}
	r->n++;
}

static const char *reason_for(const refusals *r, const char *name)
{
	for (int i = 0; i < r->n && i < 32; i++)
		if (strcmp(r->names[i], name) == 0)
			return r->reasons[i];
	return NULL;
}

/* ------------------------------------------------ tests */

START_TEST(good_tree_extracts_with_safe_modes)
{
	sbx_docker_extract_opts o = SBX_DOCKER_EXTRACT_OPTS_INIT;
	sbx_docker_extract_stats st;
	sbx_error err = SBX_ERROR_INIT;
	struct stat s;

	raw_entry(&ar, "./out/", '5', NULL, NULL, 0, 0755);
	raw_entry(&ar, "./out/a.txt", '0', NULL, "hello", 0, 04777);
	raw_entry(&ar, "out/sub/deep/b", '0', NULL, "bee", 0, 0644);
	raw_entry(&ar, "out/l", '2', "a.txt", NULL, 0, 0777);
	raw_entry(&ar, "out/sub/up", '2', "../a.txt", NULL, 0, 0777);
	raw_entry(&ar, "out/h", '1', "out/a.txt", NULL, 0, 0644);
	raw_end(&ar);
	o.strip_components = 1;
	ck_assert_int_eq(sbx_docker_tar_extract(ar.data, ar.len, tdir, &o, &st, &err), 0);
	ck_assert_str_eq(slurp("a.txt"), "hello");
	ck_assert_str_eq(slurp("sub/deep/b"), "bee");
	ck_assert_str_eq(slurp("h"), "hello");
	ck_assert_int_eq(fstatat(tdir, "a.txt", &s, 0), 0);
	ck_assert_int_eq(s.st_mode & 07777, 0755); /* setuid and group/other write dropped */
	ck_assert_int_eq(fstatat(tdir, "h", &s, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert(S_ISREG(s.st_mode));
	ck_assert_int_eq(s.st_nlink, 1); /* a copy, not a link */
	ck_assert_int_eq(fstatat(tdir, "l", &s, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert(S_ISLNK(s.st_mode));
	ck_assert_uint_eq(st.entries, 6);
	ck_assert_uint_eq(st.extracted, 5); /* the stripped root is skipped */
	ck_assert_uint_eq(st.refused, 0);
	ck_assert_uint_eq(st.bytes, 13);
	assert_nothing_outside();
}
END_TEST

START_TEST(hostile_entries_are_refused_one_by_one)
{
	sbx_docker_extract_opts o = SBX_DOCKER_EXTRACT_OPTS_INIT;
	sbx_docker_extract_stats st;
	sbx_error err = SBX_ERROR_INIT;
	refusals rf = {0};

	raw_entry(&ar, "../../x", '0', NULL, "escape", 0, 0644);
	raw_entry(&ar, abs_x, '0', NULL, "absolute", 0, 0644);
	raw_entry(&ar, "abs", '2', "/etc/passwd", NULL, 0, 0777);
	raw_entry(&ar, "abs/x", '0', NULL, "under a refused link", 0, 0644);
	raw_entry(&ar, "up", '2', "../../../etc", NULL, 0, 0777);
	raw_entry(&ar, "d", '2', "sub", NULL, 0, 0777);
	raw_entry(&ar, "sub/", '5', NULL, NULL, 0, 0755);
	raw_entry(&ar, "d/through", '0', NULL, "via symlink", 0, 0644);
	raw_entry(&ar, "null", '3', NULL, NULL, 0, 0666);
	raw_entry(&ar, "disk", '4', NULL, NULL, 0, 0666);
	raw_entry(&ar, "fifo", '6', NULL, NULL, 0, 0666);
	raw_entry(&ar, "hp", '1', "/etc/passwd", NULL, 0, 0644);
	raw_entry(&ar, "hq", '1', "../x", NULL, 0, 0644);
	raw_entry(&ar, "ok.txt", '0', NULL, "fine", 0, 0644);
	raw_end(&ar);
	o.refused = on_refused;
	o.refused_payload = &rf;
	ck_assert_int_eq(sbx_docker_tar_extract(ar.data, ar.len, tdir, &o, &st, &err), -EPERM);
	ck_assert_str_eq(err.msg, "11 of 14 entries refused, first '../../x': '..' in the path");
	ck_assert_int_eq(rf.n, 11);
	ck_assert_str_eq(reason_for(&rf, "abs/x"), "inside the refused entry 'abs'");
	ck_assert_str_eq(reason_for(&rf, abs_x), "absolute path");
	ck_assert_str_eq(reason_for(&rf, "abs"), "symlink to an absolute path '/etc/passwd'");
	ck_assert_str_eq(reason_for(&rf, "up"),
			 "symlink target '../../../etc' leaves the directory");
	/* The kernel walk refuses the link "d" on the way (O_NOFOLLOW | RESOLVE_NO_SYMLINKS). */
	ck_assert_str_eq(reason_for(&rf, "d/through"),
			 "'d': not a directory inside the target: Not a directory");
	ck_assert_str_eq(reason_for(&rf, "null"), "device node");
	ck_assert_str_eq(reason_for(&rf, "disk"), "device node");
	ck_assert_str_eq(reason_for(&rf, "fifo"), "fifo");
	ck_assert_ptr_nonnull(strstr(reason_for(&rf, "hp"), "absolute path"));
	ck_assert_ptr_nonnull(strstr(reason_for(&rf, "hq"), "'..' in the path"));
	/* The harmless entries still arrive. */
	ck_assert_str_eq(slurp("ok.txt"), "fine");
	ck_assert_int_eq(faccessat(tdir, "sub/through", F_OK, 0), -1);
	ck_assert_uint_eq(st.refused, 11);
	ck_assert_uint_eq(st.extracted, 3); /* d, sub, ok.txt */
	assert_nothing_outside();
}
END_TEST

START_TEST(symlink_chains_that_escape_are_removed)
{
	sbx_docker_extract_stats st;
	sbx_error err = SBX_ERROR_INIT;
	struct stat s;

	/* Each link looks inside on its own; together a/x leads to ../etc. */
	raw_entry(&ar, "a/", '5', NULL, NULL, 0, 0755);
	raw_entry(&ar, "a/x", '2', "l1/../../etc", NULL, 0, 0777);
	raw_entry(&ar, "a/l1", '2', ".", NULL, 0, 0777);
	raw_end(&ar);
	ck_assert_int_eq(sbx_docker_tar_extract(ar.data, ar.len, tdir, NULL, &st, &err), -EPERM);
	ck_assert_ptr_nonnull(strstr(err.msg, "'a/x': symlink resolves outside"));
	ck_assert_int_eq(fstatat(tdir, "a/x", &s, AT_SYMLINK_NOFOLLOW), -1);
	ck_assert_int_eq(fstatat(tdir, "a/l1", &s, AT_SYMLINK_NOFOLLOW), 0);
	assert_nothing_outside();

	/* Loops go too; a dangling link stays (it leads nowhere). */
	sbx_buf_reset(&ar);
	sbx_error_clear(&err);
	raw_entry(&ar, "p", '2', "q", NULL, 0, 0777);
	raw_entry(&ar, "q", '2', "p", NULL, 0, 0777);
	raw_entry(&ar, "dangling", '2', "nowhere/x", NULL, 0, 0777);
	raw_end(&ar);
	ck_assert_int_eq(sbx_docker_tar_extract(ar.data, ar.len, tdir, NULL, &st, &err), -EPERM);
	/* Removing p breaks the loop: q then dangles, which is harmless. */
	ck_assert_str_eq(err.msg, "1 of 3 entries refused, first 'p': symlink loop (removed)");
	ck_assert_int_eq(fstatat(tdir, "dangling", &s, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_uint_eq(st.extracted, 2);
}
END_TEST

START_TEST(existing_symlinks_in_the_target_are_not_followed)
{
	sbx_error err = SBX_ERROR_INIT;
	char outside[128];

	snprintf(outside, sizeof(outside), "%s/outside", tmp);
	ck_assert_int_eq(mkdir(outside, 0755), 0);
	ck_assert_int_eq(symlinkat(outside, tdir, "evil"), 0);
	ck_assert_int_eq(symlinkat(abs_nowhere, tdir, "evilfile"), 0);
	raw_entry(&ar, "evil/x", '0', NULL, "through", 0, 0644);
	raw_entry(&ar, "evilfile", '0', NULL, "onto", 0, 0644);
	raw_end(&ar);
	ck_assert_int_eq(sbx_docker_tar_extract(ar.data, ar.len, tdir, NULL, NULL, &err), -EPERM);
	ck_assert_int_eq(rmdir(outside), 0); /* still empty */
	ck_assert_int_ne(access(abs_nowhere, F_OK), 0);
	unlinkat(tdir, "evil", 0);
}
END_TEST

START_TEST(a_huge_file_stops_extraction_at_its_header)
{
	sbx_docker_extract_stats st;
	sbx_error err = SBX_ERROR_INIT;

	raw_entry(&ar, "small", '0', NULL, "ok", 0, 0644);
	/* Declares 2 GiB and carries none of it: refused from the header alone. */
	raw_entry(&ar, "big", '0', NULL, NULL, 2ULL << 30, 0644);
	ck_assert_int_eq(sbx_docker_tar_extract(ar.data, ar.len, tdir, NULL, &st, &err), -EFBIG);
	ck_assert_str_eq(err.msg, "'big': 2147483648 bytes, more than the 268435456 allowed per "
				  "file; extraction stopped");
	ck_assert_str_eq(slurp("small"), "ok");
	ck_assert_int_eq(faccessat(tdir, "big", F_OK, 0), -1);
}
END_TEST

START_TEST(total_and_entry_caps)
{
	sbx_docker_extract_opts o = SBX_DOCKER_EXTRACT_OPTS_INIT;
	sbx_error err = SBX_ERROR_INIT;
	char name[32];

	raw_entry(&ar, "one", '0', NULL, "0123456789", 0, 0644);
	raw_entry(&ar, "two", '0', NULL, "0123456789", 0, 0644);
	raw_end(&ar);
	o.max_total_bytes = 15;
	ck_assert_int_eq(sbx_docker_tar_extract(ar.data, ar.len, tdir, &o, NULL, &err), -EFBIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "'two': would exceed the 15 bytes allowed in total"));
	sbx_buf_reset(&ar);
	sbx_error_clear(&err);
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		raw_entry(&ar, name, '0', NULL, "x", 0, 0644);
	}
	raw_end(&ar);
	o.max_total_bytes = 0;
	o.max_entries = 5;
	ck_assert_int_eq(sbx_docker_tar_extract(ar.data, ar.len, tdir, &o, NULL, &err), -E2BIG);
	ck_assert_str_eq(err.msg, "more than 5 entries; extraction stopped");
	ck_assert_int_eq(faccessat(tdir, "f5", F_OK, 0), -1);
}
END_TEST

START_TEST(no_symlinks_option_and_garbage)
{
	sbx_docker_extract_opts o = SBX_DOCKER_EXTRACT_OPTS_INIT;
	sbx_error err = SBX_ERROR_INIT;
	char junk[2048];

	raw_entry(&ar, "l", '2', "x", NULL, 0, 0777);
	raw_end(&ar);
	o.no_symlinks = true;
	ck_assert_int_eq(sbx_docker_tar_extract(ar.data, ar.len, tdir, &o, NULL, &err), -EPERM);
	ck_assert_str_eq(err.msg, "1 of 1 entries refused, first 'l': symbolic links are not "
				  "allowed");
	memset(junk, 'A', sizeof(junk));
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_docker_tar_extract(junk, sizeof(junk), tdir, NULL, NULL, &err),
			 -EPROTO);
	/* A cut-off archive is an error, not a silent success. */
	sbx_buf_reset(&ar);
	raw_entry(&ar, "f", '0', NULL, "0123456789", 0, 0644);
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_docker_tar_extract(ar.data, 520, tdir, NULL, NULL, &err), -EPROTO);
}
END_TEST

START_TEST(writer_round_trip_and_cap)
{
	sbx_docker_tar *t = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const void *data;
	size_t len;
	char big[4096];
	struct stat s;

	ck_assert_int_eq(sbx_docker_tar_new(&t, 0, &err), 0);
	sbx_docker_tar_set_mtime(t, 1700000000);
	ck_assert_int_eq(sbx_docker_tar_add_dir(t, "work", 0755, 1000, 1000, &err), 0);
	ck_assert_int_eq(
		sbx_docker_tar_add_file(t, "work/in.csv", "a,b\n", 4, 0644, 1000, 1000, &err), 0);
	ck_assert_int_eq(sbx_docker_tar_add_symlink(t, "work/link", "in.csv", &err), 0);
	ck_assert_int_eq(sbx_docker_tar_add_file(t, "../bad", "x", 1, 0644, 0, 0, &err), -EXDEV);
	ck_assert_int_eq(sbx_docker_tar_finish(t, &data, &len, &err), 0);
	ck_assert_uint_eq(len % 512, 0);
	ck_assert_int_eq(sbx_docker_tar_extract(data, len, tdir, NULL, NULL, &err), 0);
	ck_assert_str_eq(slurp("work/in.csv"), "a,b\n");
	ck_assert_int_eq(fstatat(tdir, "work/link", &s, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert(S_ISLNK(s.st_mode));
	ck_assert_int_eq(sbx_docker_tar_add_file(t, "late", "x", 1, 0644, 0, 0, NULL), -EINVAL);
	sbx_docker_tar_free(t);

	/* A tree from the host, then the size cap. */
	ck_assert_int_eq(sbx_docker_tar_new(&t, 0, &err), 0);
	ck_assert_int_eq(sbx_docker_tar_add_tree(t, target, "copy", (uid_t)-1, (gid_t)-1, &err), 0);
	ck_assert_int_eq(sbx_docker_tar_finish(t, &data, &len, &err), 0);
	ck_assert_int_eq(mkdirat(tdir, "again", 0755), 0);
	{
		int fd = openat(tdir, "again", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ck_assert_int_eq(sbx_docker_tar_extract(data, len, fd, NULL, NULL, &err), 0);
		close(fd);
	}
	ck_assert_str_eq(slurp("again/copy/work/in.csv"), "a,b\n");
	sbx_docker_tar_free(t);
	ck_assert_int_eq(sbx_docker_tar_new(&t, 2048, &err), 0);
	memset(big, 'x', sizeof(big));
	sbx_error_clear(&err);
	/* libarchive writes whole blocks: the cap may strike at the entry or at the end. */
	if (sbx_docker_tar_add_file(t, "big", big, sizeof(big), 0644, 0, 0, &err) == 0)
		ck_assert_int_eq(sbx_docker_tar_finish(t, &data, &len, &err), -ENOBUFS);
	ck_assert_msg(strstr(err.msg, "archive larger than 2048 bytes"), "%s", err.msg);
	sbx_docker_tar_free(t);
}
END_TEST

START_TEST(symlink_lexical_rule)
{
	ck_assert(sbx_docker__symlink_stays_inside("a/b/l", "../c"));
	ck_assert(sbx_docker__symlink_stays_inside("a/b/l", "../../c"));
	ck_assert(!sbx_docker__symlink_stays_inside("a/b/l", "../../../c"));
	ck_assert(!sbx_docker__symlink_stays_inside("l", ".."));
	ck_assert(sbx_docker__symlink_stays_inside("l", "./x/./y"));
	ck_assert(!sbx_docker__symlink_stays_inside("l", "x/../../y"));
	ck_assert(!sbx_docker__symlink_stays_inside("l", "/etc"));
	ck_assert(!sbx_docker__symlink_stays_inside("l", ""));
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(
		s, "extract", setup, teardown, 0, good_tree_extracts_with_safe_modes,
		hostile_entries_are_refused_one_by_one, symlink_chains_that_escape_are_removed,
		existing_symlinks_in_the_target_are_not_followed,
		a_huge_file_stops_extraction_at_its_header, total_and_entry_caps,
		no_symlinks_option_and_garbage, writer_round_trip_and_cap, symlink_lexical_rule);
}

SBX_TEST_MAIN("docker-tar", add_cases)
