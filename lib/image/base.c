/* SPDX-License-Identifier: MIT */
/*
 * The offline bases: a Debian root filesystem made by mmdebstrap from the
 * host's own mirror (no registry), imported through the Engine API and
 * tagged with a hash of its package list, so it is made once per list.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "image-internal.h"

#define PACKAGE_NAME_MAX 128
#define PACKAGES_MAX	 512
#define MMDEBSTRAP_LINE	 1024

extern char **environ;

/*
 * What mmdebstrap is asked for besides the packages; part of the base's
 * hash, so changing the recipe makes new bases. The "apt" variant is
 * Essential plus apt: GNU tar stays (the lifecycle copies files with it).
 */
static const char *const recipe[] = {
	"--variant=apt",
	/* Merged /usr by symlinks (plus usr-is-merged), not by the usrmerge package, which
	 * would pull in perl: ~50 MB nothing in the sandbox uses. */
	"--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
	"--dpkgopt=path-exclude=/usr/share/man/*",
	"--dpkgopt=path-exclude=/usr/share/doc/*",
	"--dpkgopt=path-include=/usr/share/doc/*/copyright",
	"--dpkgopt=path-exclude=/usr/share/locale/*",
	/* Test suites of pandas, numpy & co. (tens of MB); removed after install, since
	 * their postinst scripts byte-compile them. */
	("--customize-hook=d=\"$1/usr/lib/python3/dist-packages\"; [ ! -d \"$d\" ] || "
	 "find \"$d\" -depth -type d -name tests -exec rm -rf {} +"),
};

static const char *const package_files[][2] = {
	[SBX_IMAGE_BASE_BUILD] = {SBX_IMAGE_PACKAGES_DIR "/build.txt", NULL},
	[SBX_IMAGE_BASE_RUNTIME] = {SBX_IMAGE_PACKAGES_DIR "/slim.txt",
				    SBX_IMAGE_PACKAGES_DIR "/gui.txt"},
};

/* Debian policy 5.6.1: lower case letters, digits, + - . ; at least two, starting alnum. */
static bool valid_package_name(const char *s, size_t n)
{
	if (n < 2 || n > PACKAGE_NAME_MAX ||
	    !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '+' ||
		      s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends the package names of one list file to names[]. */
static int parse_list(const char *file, const char *text, size_t len, char **names, size_t *n,
		      sbx_error *err)
{
	size_t i = 0, line = 1;

	while (i < len) {
		if (text[i] == '#') {
			while (i < len && text[i] != '\n')
				i++;
		} else if (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' ||
			   text[i] == '\n') {
			line += text[i] == '\n';
			i++;
		} else {
			size_t start = i;

			while (i < len && !strchr(" \t\r\n#", text[i]))
				i++;
			if (!valid_package_name(text + start, i - start))
				return sbx_error_set(err, -EINVAL,
						     "'%s' line %zu: '%.*s' is not a Debian "
						     "package name",
						     file, line,
						     (int)((i - start) > 64 ? 64 : i - start),
						     text + start);
			if (*n >= PACKAGES_MAX)
				return sbx_error_set(err, -E2BIG, "'%s': more than %d packages",
						     file, PACKAGES_MAX);
			names[*n] = strndup(text + start, i - start);
			if (!names[*n])
				return sbx_error_set(err, -ENOMEM, "'%s': out of memory", file);
			(*n)++;
		}
	}
	return 0;
}

int sbx_image_base_packages(const sbx_image_context *ctx, sbx_image_base_kind kind,
			    sbx_image_variant v, char **out, sbx_error *err)
{
	char *names[PACKAGES_MAX];
	size_t n = 0, files = kind == SBX_IMAGE_BASE_RUNTIME && v == SBX_IMAGE_VARIANT_FULL ? 2 : 1;
	sbx_buf b = SBX_BUF_INIT(PACKAGES_MAX * (PACKAGE_NAME_MAX + 1) + 1);
	int r = 0;

	for (size_t f = 0; r >= 0 && f < files; f++) {
		const char *file = package_files[kind][f];
		size_t len;
		const char *text = sbx_image_context_file(ctx, file, &len);

		if (!text)
			r = sbx_error_set(err, -ENOENT, "build context: no package list '%s'",
					  file);
		else
			r = parse_list(file, text, len, names, &n, err);
	}
	if (r >= 0 && n == 0)
		r = sbx_error_set(err, -EINVAL, "'%s': no packages", package_files[kind][0]);
	if (r >= 0) {
		qsort(names, n, sizeof(char *), cmp_str);
		for (size_t i = 0; r >= 0 && i < n; i++)
			if (i == 0 || strcmp(names[i], names[i - 1]) != 0)
				r = sbx_buf_printf(&b, "%s\n", names[i]);
		if (r < 0)
			r = sbx_error_set(err, r, "package list: out of memory");
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	if (r < 0) {
		sbx_buf_free(&b);
		return r;
	}
	*out = sbx_buf_steal(&b, NULL);
	return *out ? 0 : sbx_error_set(err, -ENOMEM, "package list: out of memory");
}

void sbx_image__base_hash(const sbx_image__base_spec *spec, char out[SBX_IMAGE_HASH_LEN])
{
	sbx_buf b = SBX_BUF_INIT(1u << 20);

	sbx_buf_printf(&b, "sandboxctl-base/1\nsuite %s\n", spec->suite);
	for (size_t i = 0; i < SBX_ELEMENTSOF(recipe); i++)
		sbx_buf_printf(&b, "recipe %s\n", recipe[i]);
	sbx_buf_puts(&b, spec->packages);
	sbx_image__sha256(b.data ? b.data : "", b.len, out);
	sbx_buf_free(&b);
}

/* Keeps the last line of mmdebstrap's stderr for the error message. */
static void relay_output(int fd, const sbx_image__progress *p, const char *phase, char *last,
			 size_t last_size)
{
	_cleanup_fclose_ FILE *f = fdopen(fd, "r");
	char line[MMDEBSTRAP_LINE];

	if (!f) {
		close(fd);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (!*line)
			continue;
		sbx_image__emit(p, SBX_IMAGE_EVENT_OUTPUT, phase, "%s", line);
		/* The most telling line is the last error before the generic one. */
		if (strncmp(line, "E: ", 3) == 0 && !strstr(line, "mmdebstrap failed to run"))
			snprintf(last, last_size, "%s", line);
	}
}

static int run_mmdebstrap(const sbx_image__base_spec *spec, const char *tar_path,
			  const sbx_image__progress *p, const char *phase, sbx_error *err)
{
	_cleanup_free_ char *include = NULL;
	const char *argv[SBX_ELEMENTSOF(recipe) + 8];
	posix_spawn_file_actions_t fa;
	char last[MMDEBSTRAP_LINE] = "";
	int pipefd[2], status, r, a = 0;
	pid_t pid;

	if (asprintf(&include, "--include=%s", spec->packages) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	for (char *c = include; *c; c++)
		if (*c == '\n')
			*c = ',';
	include[strlen(include) - 1] = '\0'; /* the last newline */

	argv[a++] = "mmdebstrap";
	for (size_t i = 0; i < SBX_ELEMENTSOF(recipe); i++)
		argv[a++] = recipe[i];
	argv[a++] = include;
	argv[a++] = spec->suite;
	argv[a++] = tar_path;
	if (spec->mirror)
		argv[a++] = spec->mirror;
	argv[a] = NULL;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return sbx_error_set(err, -errno, "pipe: %s", strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
	/* Nothing else leaks in: mmdebstrap hands apt fd numbers dash can only use below 10. */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	r = posix_spawnp(&pid, "mmdebstrap", &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (r != 0) {
		close(pipefd[0]);
		if (r == ENOENT)
			return sbx_error_set(err, -ENOENT,
					     "base '%s': mmdebstrap not found: install it "
					     "(scripts/deps.sh) or build from a registry base",
					     spec->name);
		return sbx_error_set(err, -r, "base '%s': cannot run mmdebstrap: %s", spec->name,
				     strerror(r));
	}
	relay_output(pipefd[0], p, phase, last, sizeof(last));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return sbx_error_set(err, -errno, "waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return sbx_error_set(err, -EIO,
				     "base '%s': mmdebstrap failed (%s %d)%s%s (it needs root or "
				     "user namespaces and the Debian mirror; its output is in "
				     "the progress log)",
				     spec->name, WIFEXITED(status) ? "exit" : "signal",
				     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
				     *last ? ": " : "", last);
	return 0;
}

static bool valid_label_part(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-:/",
			    *s))
			return false;
	return true;
}

static int import_base(sbx_docker *d, const sbx_image__base_spec *spec, const char *repo,
		       const char *tar_path, const char *hash, char **id_out, sbx_error *err)
{
	char tag[SBX_IMAGE_TAG_LEN + 1];
	char *changes[16 + 3] = {NULL};
	size_t nc = 0;
	int r = 0;

	if (spec->n_labels > 16)
		return sbx_error_set(err, -E2BIG, "base '%s': too many labels", spec->name);
	snprintf(tag, sizeof(tag), "%.*s", SBX_IMAGE_TAG_LEN, hash);
	if (asprintf(&changes[nc++], "LABEL %s=%s", SBX_LABEL_BASE, spec->name) < 0 ||
	    asprintf(&changes[nc++], "LABEL %s=%s", SBX_LABEL_INPUTS_HASH, hash) < 0)
		r = sbx_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; r >= 0 && i < spec->n_labels; i++) {
		if (!valid_label_part(spec->labels[i].key) ||
		    !valid_label_part(spec->labels[i].value))
			r = sbx_error_set(err, -EINVAL, "label '%s': only [A-Za-z0-9._:/-] allowed",
					  spec->labels[i].key);
		else if (asprintf(&changes[nc++], "LABEL %s=%s", spec->labels[i].key,
				  spec->labels[i].value) < 0)
			r = sbx_error_set(err, -ENOMEM, "out of memory");
	}
	if (r >= 0) {
		sbx_docker_import_opts io = SBX_DOCKER_IMPORT_OPTS_INIT;

		io.tar_path = tar_path;
		io.repo = repo;
		io.tag = tag;
		io.changes = (const char *const *)changes;
		io.message = "sandboxctl base (mmdebstrap)";
		r = sbx_docker_image_import(d, &io, id_out, err);
	}
	for (size_t i = 0; i < SBX_ELEMENTSOF(changes); i++)
		free(changes[i]);
	return r;
}

int sbx_image__base_ensure(sbx_docker *d, const sbx_image__base_spec *spec,
			   const sbx_image__progress *p, char **ref_out, char **id_out, bool *made,
			   sbx_error *err)
{
	char hash[SBX_IMAGE_HASH_LEN], phase[32], repo[128], dir[4096], tar_path[4200];
	_cleanup_free_ char *ref = NULL, *id = NULL;
	sbx_docker_image *img = NULL;
	int r;

	sbx_image__base_hash(spec, hash);
	snprintf(phase, sizeof(phase), "base-%s", spec->name);
	snprintf(repo, sizeof(repo), "%s-%s", SBX_IMAGE_REPO_BASE, spec->name);
	if (asprintf(&ref, "%s:%.*s", repo, SBX_IMAGE_TAG_LEN, hash) < 0) {
		ref = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	r = sbx_docker_image_inspect(d, ref, &img, NULL);
	if (r >= 0 && img->created >= spec->rebuild_before) {
		id = strdup(img->id);
		sbx_docker_image_free(img);
		if (!id)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		sbx_image__emit(p, SBX_IMAGE_EVENT_SKIP, phase, "%s exists", ref);
		*made = false;
		*ref_out = TAKE_PTR(ref);
		*id_out = TAKE_PTR(id);
		return 0;
	}
	sbx_docker_image_free(img);
	if (r < 0 && r != -ENOENT)
		return sbx_error_set(err, r, "base '%s': inspect failed", ref);

	sbx_image__emit(p, SBX_IMAGE_EVENT_PHASE, phase, "making %s with mmdebstrap (%s, %s)", ref,
			spec->suite, spec->mirror ? spec->mirror : "default mirror");
	snprintf(dir, sizeof(dir), "%s/sbx-base-XXXXXX", spec->tmp_dir);
	if (!mkdtemp(dir))
		return sbx_error_set(err, -errno, "temporary directory in '%s': %s", spec->tmp_dir,
				     strerror(errno));
	snprintf(tar_path, sizeof(tar_path), "%s/rootfs.tar", dir);
	r = run_mmdebstrap(spec, tar_path, p, phase, err);
	if (r >= 0) {
		sbx_image__emit(p, SBX_IMAGE_EVENT_OUTPUT, phase, "importing %s", ref);
		r = import_base(d, spec, repo, tar_path, hash, &id, err);
	}
	unlink(tar_path);
	rmdir(dir);
	if (r < 0)
		return r;
	sbx_image__emit(p, SBX_IMAGE_EVENT_DONE, phase, "%s made", ref);
	sbx_image__prune(d, repo, SBX_LABEL_BASE, spec->name, id, p);
	*made = true;
	*ref_out = TAKE_PTR(ref);
	*id_out = TAKE_PTR(id);
	return 0;
}
