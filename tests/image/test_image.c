/* SPDX-License-Identifier: MIT */
/* Unit tests for lib/image: context collection, the inputs hash, package lists. */
#include <archive.h>
#include <archive_entry.h>
#include "check_main.h"
#include "test_files.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image-internal.h"
#include "sbx/image.h"

static char root[256];

static void write_file(const char *rel, const char *content)
{
	char path[512], dir[1100];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "mkdir -p \"$(dirname '%s')\"", path);
	ck_assert_int_eq(system(dir), 0);
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(content, f);
	fclose(f);
}

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/sbx-image-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
	write_file("images/context.list", "# comment\nmeson.build\nsrc/  # trailing\n\nimages\n");
	write_file("images/Dockerfile", "FROM scratch\n");
	write_file("images/packages/build.txt", "gcc # the compiler\nmeson\n\tlibc6-dev  gcc\n");
	write_file("images/packages/slim.txt", "# runtime\npython3\nlibcjson1\n");
	write_file("images/packages/gui.txt", "xvfb\npython3\nlibreoffice-calc\n");
	write_file("meson.build", "project('x', 'c')\n");
	write_file("src/a.c", "int a;\n");
	write_file("src/sub/b.c", "int b;\n");
	write_file("src/.hidden", "secret\n");
	write_file("src/a.o", "object\n");
	write_file("src/__pycache__/m.pyc", "bytecode\n");
	write_file("notlisted.c", "int n;\n");
	char link[512];

	snprintf(link, sizeof(link), "%s/src/link.c", root);
	ck_assert_int_eq(symlink("a.c", link), 0);
}

static void teardown(void)
{
	ck_assert_int_eq(sbx_path_remove_tree_at(AT_FDCWD, root), 0);
}

static void collect_hash(char out[SBX_IMAGE_HASH_LEN])
{
	sbx_image_context *ctx = NULL;
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_msg(sbx_image_context_collect(&ctx, root, &err) == 0, "%s", err.msg);
	sbx_image_context_hash(ctx, out);
	sbx_image_context_free(ctx);
}

START_TEST(collect_lists_sorted_and_skips)
{
	sbx_image_context *ctx = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const char *want[] = {"images",
			      "images/Dockerfile",
			      "images/context.list",
			      "images/packages",
			      "images/packages/build.txt",
			      "images/packages/gui.txt",
			      "images/packages/slim.txt",
			      "meson.build",
			      "src",
			      "src/a.c",
			      "src/link.c",
			      "src/sub",
			      "src/sub/b.c"};
	size_t len;

	ck_assert_msg(sbx_image_context_collect(&ctx, root, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(sbx_image_context_count(ctx), SBX_ELEMENTSOF(want));
	for (size_t i = 0; i < SBX_ELEMENTSOF(want); i++)
		ck_assert_str_eq(sbx_image_context_path(ctx, i), want[i]);
	ck_assert_ptr_null(sbx_image_context_path(ctx, SBX_ELEMENTSOF(want)));
	ck_assert_mem_eq(sbx_image_context_file(ctx, "src/sub/b.c", &len), "int b;\n", 7);
	ck_assert_uint_eq(len, 7);
	ck_assert_ptr_null(sbx_image_context_file(ctx, "src", NULL));	     /* a directory */
	ck_assert_ptr_null(sbx_image_context_file(ctx, "src/link.c", NULL)); /* a symlink */
	ck_assert_ptr_null(sbx_image_context_file(ctx, "notlisted.c", NULL));
	sbx_image_context_free(ctx);
}
END_TEST

START_TEST(hash_follows_content_not_time)
{
	char h1[SBX_IMAGE_HASH_LEN], h2[SBX_IMAGE_HASH_LEN], path[512];

	collect_hash(h1);
	ck_assert_uint_eq(strlen(h1), 64);
	ck_assert_uint_eq(strspn(h1, "0123456789abcdef"), 64);

	/* Same content, new mtime: same hash. */
	snprintf(path, sizeof(path), "%s/src/a.c", root);
	ck_assert_int_eq(utimensat(AT_FDCWD, path, (struct timespec[]){{1, 0}, {1, 0}}, 0), 0);
	collect_hash(h2);
	ck_assert_str_eq(h1, h2);

	/* Hidden and build-output files do not count. */
	write_file("src/.hidden", "changed\n");
	write_file("src/new.o", "more object\n");
	write_file("src/README.md", "docs do not go into the image\n");
	collect_hash(h2);
	ck_assert_str_eq(h1, h2);

	/* One byte of a source: different. */
	write_file("src/a.c", "int A;\n");
	collect_hash(h2);
	ck_assert_str_ne(h1, h2);
	write_file("src/a.c", "int a;\n");
	collect_hash(h2);
	ck_assert_str_eq(h1, h2);

	/* The executable bit: different. */
	ck_assert_int_eq(chmod(path, 0755), 0);
	collect_hash(h2);
	ck_assert_str_ne(h1, h2);
	ck_assert_int_eq(chmod(path, 0644), 0);

	/* A new empty directory and a new file: different. */
	snprintf(path, sizeof(path), "%s/src/empty", root);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	collect_hash(h2);
	ck_assert_str_ne(h1, h2);
	ck_assert_int_eq(rmdir(path), 0);
	write_file("src/sub/c.c", "");
	collect_hash(h2);
	ck_assert_str_ne(h1, h2);
}
END_TEST

START_TEST(hash_separates_fields)
{
	char h1[SBX_IMAGE_HASH_LEN], h2[SBX_IMAGE_HASH_LEN], p1[512], p2[512];

	/* Moving bytes from one file's name into its content must not collide. */
	write_file("src/ab", "c");
	collect_hash(h1);
	snprintf(p1, sizeof(p1), "%s/src/ab", root);
	snprintf(p2, sizeof(p2), "%s/src/a", root);
	ck_assert_int_eq(rename(p1, p2), 0);
	write_file("src/a", "bc");
	collect_hash(h2);
	ck_assert_str_ne(h1, h2);
}
END_TEST

START_TEST(collect_errors_name_the_path)
{
	sbx_image_context *ctx = NULL;
	sbx_error err = SBX_ERROR_INIT;

	write_file("images/context.list", "images\nbench\n");
	ck_assert_int_eq(sbx_image_context_collect(&ctx, root, &err), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err.msg, "'bench'"));
	ck_assert_ptr_null(ctx);

	sbx_error_clear(&err);
	write_file("images/context.list", "images\n../etc\n");
	ck_assert_int_eq(sbx_image_context_collect(&ctx, root, &err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "../etc"));

	sbx_error_clear(&err);
	write_file("images/context.list", "/etc/passwd\n");
	ck_assert_int_eq(sbx_image_context_collect(&ctx, root, &err), -EINVAL);

	sbx_error_clear(&err);
	write_file("images/context.list", "meson.build\n");
	ck_assert_int_eq(sbx_image_context_collect(&ctx, root, &err), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err.msg, "images/Dockerfile"));

	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_image_context_collect(&ctx, "/nonexistent-sbx", &err), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent-sbx"));
}
END_TEST

START_TEST(collect_caps_file_size)
{
	sbx_image_context *ctx = NULL;
	sbx_error err = SBX_ERROR_INIT;
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/src/huge.bin", root);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)SBX_IMAGE_CONTEXT_MAX_FILE_BYTES + 1), 0);
	close(fd);
	ck_assert_int_eq(sbx_image_context_collect(&ctx, root, &err), -EFBIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "src/huge.bin"));
	ck_assert_ptr_null(ctx);
}
END_TEST

START_TEST(packages_normalised)
{
	sbx_image_context *ctx = NULL;
	sbx_error err = SBX_ERROR_INIT;
	char *list = NULL;

	ck_assert_msg(sbx_image_context_collect(&ctx, root, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(sbx_image_base_packages(ctx, SBX_IMAGE_BASE_BUILD, SBX_IMAGE_VARIANT_SLIM,
						 &list, &err),
			 0);
	ck_assert_str_eq(list, "gcc\nlibc6-dev\nmeson\n");
	free(list);
	ck_assert_int_eq(sbx_image_base_packages(ctx, SBX_IMAGE_BASE_RUNTIME,
						 SBX_IMAGE_VARIANT_SLIM, &list, &err),
			 0);
	ck_assert_str_eq(list, "libcjson1\npython3\n");
	free(list);
	ck_assert_int_eq(sbx_image_base_packages(ctx, SBX_IMAGE_BASE_RUNTIME,
						 SBX_IMAGE_VARIANT_FULL, &list, &err),
			 0);
	ck_assert_str_eq(list, "libcjson1\nlibreoffice-calc\npython3\nxvfb\n");
	free(list);
	sbx_image_context_free(ctx);
}
END_TEST

START_TEST(packages_refuse_bad_names)
{
	static const char *bad[] = {"gcc\n--allow-unauthenticated\n", "gcc\nFoo\n", "gcc\nx\n",
				    "gcc\n$(reboot)\n", "# nothing\n"};

	for (size_t i = 0; i < SBX_ELEMENTSOF(bad); i++) {
		sbx_image_context *ctx = NULL;
		sbx_error err = SBX_ERROR_INIT;
		char *list = NULL;

		write_file("images/packages/build.txt", bad[i]);
		ck_assert_msg(sbx_image_context_collect(&ctx, root, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(sbx_image_base_packages(ctx, SBX_IMAGE_BASE_BUILD,
							 SBX_IMAGE_VARIANT_SLIM, &list, &err),
				 -EINVAL);
		ck_assert_ptr_null(list);
		ck_assert_ptr_nonnull(strstr(err.msg, "build.txt"));
		sbx_image_context_free(ctx);
	}
}
END_TEST

START_TEST(base_hash_covers_suite_and_packages)
{
	sbx_image__base_spec a = {.name = "slim", .suite = "bookworm", .packages = "python3\n"};
	sbx_image__base_spec b = a;
	char ha[SBX_IMAGE_HASH_LEN], hb[SBX_IMAGE_HASH_LEN];

	sbx_image__base_hash(&a, ha);
	b.mirror = "http://example.invalid/debian"; /* the mirror is not an input */
	b.tmp_dir = "/elsewhere";
	sbx_image__base_hash(&b, hb);
	ck_assert_str_eq(ha, hb);
	b.suite = "trixie";
	sbx_image__base_hash(&b, hb);
	ck_assert_str_ne(ha, hb);
	b = a;
	b.packages = "python3\npython3-pandas\n";
	sbx_image__base_hash(&b, hb);
	ck_assert_str_ne(ha, hb);
}
END_TEST

START_TEST(context_tar_is_reproducible)
{
	sbx_image_context *ctx = NULL;
	sbx_error err = SBX_ERROR_INIT;
	sbx_docker_tar *t1 = NULL, *t2 = NULL;
	const void *d1, *d2;
	size_t l1, l2, n = 0;
	struct archive *a = archive_read_new();
	struct archive_entry *e;

	ck_assert_msg(sbx_image_context_collect(&ctx, root, &err) == 0, "%s", err.msg);
	ck_assert_msg(sbx_image_context_tar(ctx, &t1, &d1, &l1, &err) == 0, "%s", err.msg);
	ck_assert_msg(sbx_image_context_tar(ctx, &t2, &d2, &l2, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(l1, l2);
	ck_assert_int_eq(memcmp(d1, d2, l1), 0);

	archive_read_support_format_tar(a);
	ck_assert_int_eq(archive_read_open_memory(a, d1, l1), ARCHIVE_OK);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);

		ck_assert_int_eq(archive_entry_mtime(e), 1);
		ck_assert_int_eq(archive_entry_uid(e), 0);
		if (strcmp(name, "src/link.c") == 0)
			ck_assert_str_eq(archive_entry_symlink(e), "a.c");
		ck_assert_ptr_null(strstr(name, ".hidden"));
		n++;
	}
	ck_assert_uint_eq(n, sbx_image_context_count(ctx));
	archive_read_free(a);
	sbx_docker_tar_free(t1);
	sbx_docker_tar_free(t2);
	sbx_image_context_free(ctx);
}
END_TEST

/* The project's own tree: what `sandboxctl build` really sends. */
START_TEST(real_tree_context)
{
	const char *src = getenv("SBX_SOURCE_ROOT");
	sbx_image_context *ctx = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const char *dir = NULL;
	char *list = NULL;

	ck_assert_ptr_nonnull(src);
	ck_assert_int_eq(sbx_image_source_dir(NULL, &dir, &err), 0);
	ck_assert_msg(sbx_image_context_collect(&ctx, src, &err) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(sbx_image_context_file(ctx, "images/Dockerfile", NULL));
	ck_assert_ptr_nonnull(sbx_image_context_file(ctx, "images/init/sandbox-init.c", NULL));
	ck_assert_ptr_nonnull(sbx_image_context_file(ctx, "meson.build", NULL));
	ck_assert_ptr_nonnull(sbx_image_context_file(ctx, "server/meson.build", NULL));
	ck_assert_ptr_nonnull(sbx_image_context_file(ctx, "lib/util/meson.build", NULL));
	for (size_t i = 0; i < sbx_image_context_count(ctx); i++) {
		const char *p = sbx_image_context_path(ctx, i);

		ck_assert_msg(strncmp(p, "lib/docker", 10) != 0 && strncmp(p, "cmd/", 4) != 0 &&
				      strncmp(p, "tests/", 6) != 0 && !strstr(p, "/."),
			      "'%s' should not be in the context", p);
	}
	ck_assert_int_eq(sbx_image_base_packages(ctx, SBX_IMAGE_BASE_RUNTIME,
						 SBX_IMAGE_VARIANT_FULL, &list, &err),
			 0);
	ck_assert_ptr_nonnull(strstr(list, "libreoffice-calc\n"));
	free(list);
	sbx_image_context_free(ctx);

	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_image_source_dir("/nonexistent-sbx", &dir, &err), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err.msg, "--source-dir"));
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "context", setup, teardown, 0, collect_lists_sorted_and_skips,
		      hash_follows_content_not_time, hash_separates_fields,
		      collect_errors_name_the_path, collect_caps_file_size, packages_normalised,
		      packages_refuse_bad_names, base_hash_covers_suite_and_packages,
		      context_tar_is_reproducible, real_tree_context);
}

SBX_TEST_MAIN("image", add_cases)
