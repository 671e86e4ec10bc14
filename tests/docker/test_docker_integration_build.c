/* SPDX-License-Identifier: MIT */
/* Hostile and crafted tars served by a container, images (tag, list, remove) and builds. */
#include "test_docker_integration.h"

typedef struct names {
	char list[2048];
} names;

static void note_refused(const char *entry, const char *reason, void *payload)
{
	names *nm = payload;
	size_t l = strlen(nm->list);

	snprintf(nm->list + l, sizeof(nm->list) - l, "%s|", entry);
}

static void rm_tree(const char *path)
{
	/* Test-only cleanup of a directory the test made under /tmp. */
	ck_assert(strncmp(path, "/tmp/sbx-itest-", 15) == 0);
	ck_assert_int_eq(sbx_path_remove_tree_at(AT_FDCWD, path), 0);
}

START_TEST(hostile_tar_from_a_container_is_refused)
{
	sbx_docker *d = connect_engine();
	sbx_docker_extract_opts o = SBX_DOCKER_EXTRACT_OPTS_INIT;
	sbx_docker_extract_stats st;
	sbx_error err = SBX_ERROR_INIT;
	char tmp[] = "/tmp/sbx-itest-hostile.XXXXXX", target[128], path[192];
	char *id = running_sleeper(d, false);
	names nm = {{0}};
	struct timespec t0;
	struct stat s;

	/* Things the engine itself will serve: built in the container. */
	run_in(d, id,
	       "mkdir -p /out/sub && echo good > /out/good.txt && ln -s /etc/passwd /out/abs && "
	       "ln -s ../../../../../etc /out/up && mknod /out/null c 1 3 && mkfifo /out/fifo && "
	       "ln /out/good.txt /out/hard && echo s > /out/sub/s && truncate -s 2G /out/zz-big",
	       0, NULL);
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(target, sizeof(target), "%s/target", tmp);
	ck_assert_int_eq(mkdir(target, 0755), 0);
	o.strip_components = 1;
	o.refused = note_refused;
	o.refused_payload = &nm;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(sbx_docker_archive_get(d, id, "/out", target, &o, &st, &err), -EFBIG);
	/* Stopped at the 2 GB entry's header, not after downloading it. */
	ck_assert_int_lt(ms_since(&t0), 10000);
	ck_assert_msg(strstr(err.msg, "'zz-big': 2147483648 bytes"), "%s", err.msg);
	ck_assert_msg(strstr(nm.list, "abs|") && strstr(nm.list, "up|") &&
			      strstr(nm.list, "null|") && strstr(nm.list, "fifo|"),
		      "refused: %s", nm.list);
	snprintf(path, sizeof(path), "%s/good.txt", target);
	ck_assert_int_eq(stat(path, &s), 0);
	snprintf(path, sizeof(path), "%s/hard", target);
	ck_assert_int_eq(lstat(path, &s), 0);
	ck_assert(S_ISREG(s.st_mode));
	snprintf(path, sizeof(path), "%s/sub/s", target);
	ck_assert_int_eq(stat(path, &s), 0);
	snprintf(path, sizeof(path), "%s/abs", target);
	ck_assert_int_ne(lstat(path, &s), 0);
	snprintf(path, sizeof(path), "%s/null", target);
	ck_assert_int_ne(lstat(path, &s), 0);
	snprintf(path, sizeof(path), "%s/zz-big", target);
	ck_assert_int_ne(lstat(path, &s), 0);
	sbx_test_assert_only(tmp, "target");
	rm_tree(tmp);
	sbx_docker_container_remove(d, id, true, true, NULL);
	free(id);
	sbx_docker_free(d);
}
END_TEST

/* A tar no engine would make (crafted names), copied in and served back by the container. */
START_TEST(crafted_tar_served_back_by_a_container)
{
	const char *cat[] = {"cat", "/work/evil.tar", NULL};
	sbx_docker_exec_opts eo = SBX_DOCKER_EXEC_OPTS_INIT;
	sbx_docker *d = connect_engine();
	sbx_docker_tar *outer = NULL;
	sbx_error err = SBX_ERROR_INIT;
	sbx_buf evil = SBX_BUF_INIT(1 << 20), back = SBX_BUF_INIT(1 << 20);
	char tmp[] = "/tmp/sbx-itest-crafted.XXXXXX", target[128];
	char *id = running_sleeper(d, false);
	names nm = {{0}};
	sbx_docker_extract_opts o = SBX_DOCKER_EXTRACT_OPTS_INIT;
	sbx_docker_extract_stats st;
	const void *data;
	size_t len;
	int code = -1, tfd;

	/* A raw ustar: the tar writer (rightly) refuses such names. */
	{
		struct {
			const char *name, *link;
			char type;
			const char *data;
		} spec[] = {
			{"../../x", NULL, '0', "escape"},
			{"/tmp/sbx-itest-abs", NULL, '0', "absolute"},
			{"l", "/tmp", '2', NULL},
			{"l/through", NULL, '0', "via link"},
			{"dev", NULL, '3', NULL},
			{"fine.txt", NULL, '0', "fine"},
		};
		const void *idata;
		size_t ilen;

		for (size_t i = 0; i < SBX_ELEMENTSOF(spec); i++) {
			unsigned char h[512] = {0};
			size_t dl = spec[i].data ? strlen(spec[i].data) : 0;
			unsigned sum = 0;
			char tmpf[32];

			memcpy(h, spec[i].name, strlen(spec[i].name));
			memcpy(h + 100, "0000644", 7);
			memcpy(h + 108, "0000000", 7);
			memcpy(h + 116, "0000000", 7);
			snprintf(tmpf, sizeof(tmpf), "%011zo", dl);
			memcpy(h + 124, tmpf, 11);
			memcpy(h + 136, "14000000000", 11);
			memset(h + 148, ' ', 8);
			h[156] = (unsigned char)spec[i].type;
			if (spec[i].link)
				memcpy(h + 157, spec[i].link, strlen(spec[i].link));
			memcpy(h + 257, "ustar", 6);
			memcpy(h + 263, "00", 2);
			for (size_t k = 0; k < 512; k++)
				sum += h[k];
			snprintf(tmpf, sizeof(tmpf), "%06o", sum);
			memcpy(h + 148, tmpf, 7);
			sbx_buf_append(&evil, h, 512);
			if (dl) {
				static const char zeros[512];
				sbx_buf_append(&evil, spec[i].data, dl);
				sbx_buf_append(&evil, zeros, 512 - dl);
			}
		}
		{
			static const char zeros[1024];
			sbx_buf_append(&evil, zeros, sizeof(zeros));
		}
		idata = evil.data;
		ilen = evil.len;
		ck_assert_int_eq(sbx_docker_tar_new(&outer, 0, &err), 0);
		ck_assert_int_eq(
			sbx_docker_tar_add_file(outer, "evil.tar", idata, ilen, 0644, 0, 0, &err),
			0);
		ck_assert_int_eq(sbx_docker_tar_finish(outer, &data, &len, &err), 0);
	}
	ck_assert_msg(sbx_docker_archive_put(d, id, "/work", data, len, &err) == 0, "%s", err.msg);
	sbx_docker_tar_free(outer);
	eo.cmd = cat;
	ck_assert_msg(sbx_docker_exec_run(d, id, &eo, 20000, &back, NULL, &code, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(code, 0);
	ck_assert_uint_eq(back.len, evil.len);

	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(target, sizeof(target), "%s/target", tmp);
	ck_assert_int_eq(mkdir(target, 0755), 0);
	tfd = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	o.refused = note_refused;
	o.refused_payload = &nm;
	ck_assert_int_eq(sbx_docker_tar_extract(back.data, back.len, tfd, &o, &st, &err), -EPERM);
	close(tfd);
	ck_assert_str_eq(nm.list, "../../x|/tmp/sbx-itest-abs|l|l/through|dev|");
	ck_assert_ptr_nonnull(strstr(err.msg, "5 of 6 entries refused"));
	ck_assert_uint_eq(st.extracted, 1);
	ck_assert_int_ne(access("/tmp/sbx-itest-abs", F_OK), 0);
	ck_assert_int_ne(access("/tmp/through", F_OK), 0);
	sbx_test_assert_only(tmp, "target");
	rm_tree(tmp);
	sbx_buf_free(&evil);
	sbx_buf_free(&back);
	free(id);
	sbx_docker_free(d);
}
END_TEST

/* A build context holding only dockerfile, set as b's; free it once built. */
static sbx_docker_tar *dockerfile_context(const char *dockerfile, sbx_docker_build_opts *b)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_docker_tar *ctx = NULL;

	ck_assert_int_eq(sbx_docker_tar_new(&ctx, 0, &err), 0);
	ck_assert_int_eq(sbx_docker_tar_add_file(ctx, "Dockerfile", dockerfile, strlen(dockerfile),
						 0644, 0, 0, &err),
			 0);
	ck_assert_int_eq(sbx_docker_tar_finish(ctx, &b->context_tar, &b->context_tar_len, &err), 0);
	return ctx;
}

START_TEST(images_tag_list_remove_build)
{
	const char *filters[] = {SBX_LABEL_TEST "=1", NULL};
	const char *tags[] = {"sandboxctl-test/built:"
			      "latest",
			      NULL};
	sbx_docker_kv labels[] = {{SBX_LABEL_TEST, "1"}};
	sbx_docker_build_opts b = SBX_DOCKER_BUILD_OPTS_INIT;
	sbx_docker *d = connect_engine();
	sbx_docker_image *imgs = NULL, *img = NULL;
	sbx_docker_tar *ctx = NULL;
	sbx_error err = SBX_ERROR_INIT;
	char tag[64], *built = NULL;
	const char *df;
	size_t n = 0;
	bool found = false;

	snprintf(tag, sizeof(tag), "t%d", (int)getpid());
	ck_assert_int_eq(
		sbx_docker_image_tag(d, SBX_TEST_IMAGE, "sandboxctl-test/busybox", tag, &err), 0);
	ck_assert_int_eq(sbx_docker_image_list(d, filters, &imgs, &n, &err), 0);
	for (size_t i = 0; i < n; i++)
		for (char **t = imgs[i].repo_tags; *t; t++)
			if (strstr(*t, tag))
				found = true;
	ck_assert(found);
	sbx_docker_image_list_free(imgs, n);
	{
		char full[128];
		snprintf(full, sizeof(full), "sandboxctl-test/busybox:%s", tag);
		ck_assert_int_eq(sbx_docker_image_remove(d, full, false, &err), 0);
		ck_assert_int_eq(sbx_docker_image_inspect(d, full, &img, NULL), -ENOENT);
	}

	/* Build from an in-memory context, with streamed progress. */
	df = "FROM " SBX_TEST_IMAGE "\nRUN echo built > /built\n";
	ctx = dockerfile_context(df, &b);
	b.tags = tags;
	b.labels = labels;
	b.n_labels = 1;
	b.network_mode = "none";
	ck_assert_msg(sbx_docker_image_build(d, &b, &built, &err) == 0, "%s", err.msg);
	ck_assert(strncmp(built, "sha256:", 7) == 0);
	ck_assert_int_eq(sbx_docker_image_inspect(d, tags[0], &img, &err), 0);
	ck_assert_str_eq(img->id, built);
	ck_assert_str_eq(sbx_docker_label_get(img->labels, img->n_labels, SBX_LABEL_TEST), "1");
	sbx_docker_image_free(img);
	ck_assert_int_eq(sbx_docker_image_remove(d, tags[0], true, &err), 0);
	sbx_docker_tar_free(ctx);
	free(built);
	built = NULL;

	/* A failing step surfaces the engine's errorDetail. */
	df = "FROM " SBX_TEST_IMAGE "\nRUN exit 3\n";
	ctx = dockerfile_context(df, &b);
	b.tags = NULL;
	ck_assert_int_eq(sbx_docker_image_build(d, &b, &built, &err), -EIO);
	ck_assert_msg(strstr(err.msg, "returned a non-zero code: 3"), "%s", err.msg);
	ck_assert_ptr_null(built);
	sbx_docker_tar_free(ctx);
	sbx_docker_free(d);
}
END_TEST

/* Progress callbacks see the build output. */
static int count_lines(const sbx_docker_progress *p, void *payload)
{
	if (p->stream)
		(*(int *)payload)++;
	return 0;
}

START_TEST(build_progress_from_a_directory)
{
	const char *tags[] = {"sandboxctl-test/ctxdir:latest", NULL};
	sbx_docker_kv labels[] = {{SBX_LABEL_TEST, "1"}};
	sbx_docker_build_opts b = SBX_DOCKER_BUILD_OPTS_INIT;
	sbx_docker *d = connect_engine();
	sbx_error err = SBX_ERROR_INIT;
	char dir[] = "/tmp/sbx-itest-ctx.XXXXXX", path[128];
	const char *df = "FROM " SBX_TEST_IMAGE "\nCOPY hello.txt /hello.txt\n";
	int lines = 0;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/Dockerfile", dir);
	f = fopen(path, "we");
	fputs(df, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/hello.txt", dir);
	f = fopen(path, "we");
	fputs("hello\n", f);
	fclose(f);
	b.context_dir = dir;
	b.tags = tags;
	b.labels = labels;
	b.n_labels = 1;
	b.progress = count_lines;
	b.progress_payload = &lines;
	ck_assert_msg(sbx_docker_image_build(d, &b, NULL, &err) == 0, "%s", err.msg);
	ck_assert_int_ge(lines, 2);
	ck_assert_int_eq(sbx_docker_image_remove(d, tags[0], true, &err), 0);
	rm_tree(dir);
	sbx_docker_free(d);
}
END_TEST

void docker_build_tests(TCase *tc)
{
	SBX_TEST_ADD(tc, hostile_tar_from_a_container_is_refused,
		     crafted_tar_served_back_by_a_container, images_tag_list_remove_build,
		     build_progress_from_a_directory);
}
