/* SPDX-License-Identifier: MIT */
/* Confined paths (openat2 and its fallback) and capped file reads, in a scratch directory. */
#include "test_util.h"

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

START_TEST(path_within_is_by_component)
{
	ck_assert(sbx_path_within("/run", "/run"));
	ck_assert(sbx_path_within("/run/sandbox", "/run"));
	ck_assert(!sbx_path_within("/running", "/run"));
	ck_assert(!sbx_path_within("/ru", "/run"));
	ck_assert(sbx_path_within("/app", "/"));
	ck_assert(!sbx_path_within("app", "/"));
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

void util_path_cases(Suite *s)
{
	SBX_TEST_CASE(s, "path", sbx_test_scratch_open_setup, sbx_test_scratch_open_teardown, 0,
		      path_confines, path_mkdirs_refuses_symlinked_dirs, path_write_atomic_replaces,
		      path_write_beneath_confines, path_within_is_by_component,
		      file_read_capped_reads_and_refuses, file_read_fd_stops_at_end_of_file);
}
