/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Tars for the Docker client, via libarchive: build one in memory (to copy
 * files into a container, or as a build context / root filesystem), and
 * extract an UNTRUSTED one (what comes out of a container) safely.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sbx/cleanup.h"
#include "sbx/error.h"

/* ---------------------------------------------------------------- writing */

typedef struct sbx_docker_tar sbx_docker_tar;

/*
 * A new in-memory ustar/pax writer holding at most max_bytes of archive (0:
 * 1 GiB; -EFBIG beyond). Free with sbx_docker_tar_free.
 */
int sbx_docker_tar_new(sbx_docker_tar **out, size_t max_bytes, sbx_error *err);
void sbx_docker_tar_free(sbx_docker_tar *t);
SBX_DEFINE_CLEANUP(sbx_docker_tar, sbx_docker_tar_free)

/*
 * Entries. name is relative ("work/in.xlsx"); uid/gid are written as given
 * (files copied into a sandbox should belong to its non-root user), mtime is
 * the time of the call unless set with sbx_docker_tar_set_mtime.
 */
int sbx_docker_tar_add_file(sbx_docker_tar *t, const char *name, const void *data, size_t len,
			    mode_t mode, uid_t uid, gid_t gid, sbx_error *err);
int sbx_docker_tar_add_dir(sbx_docker_tar *t, const char *name, mode_t mode, uid_t uid, gid_t gid,
			   sbx_error *err);
int sbx_docker_tar_add_symlink(sbx_docker_tar *t, const char *name, const char *target,
			       sbx_error *err);

/*
 * Adds the contents of host_dir (recursively, not the directory itself) under
 * prefix ("" or NULL: at the root). Regular files, directories and symlinks
 * (kept as links) only; other types are skipped with a warning in the log.
 * uid/gid (uid_t)-1 / (gid_t)-1 keep the host's owners.
 */
int sbx_docker_tar_add_tree(sbx_docker_tar *t, const char *host_dir, const char *prefix, uid_t uid,
			    gid_t gid, sbx_error *err);

/* Fixed mtime for entries added afterwards (reproducible tars). */
void sbx_docker_tar_set_mtime(sbx_docker_tar *t, int64_t mtime);

/*
 * Closes the archive and points *data and *len at it (owned by t, valid until
 * sbx_docker_tar_free). No more entries can be added.
 */
int sbx_docker_tar_finish(sbx_docker_tar *t, const void **data, size_t *len, sbx_error *err);

/* ---------------------------------------------------------------- extracting */

/* Called for each refused entry: the entry's name and why (one line). */
typedef void (*sbx_docker_refused_fn)(const char *entry, const char *reason, void *payload);

typedef struct sbx_docker_extract_opts {
	unsigned int version;
	uint64_t max_file_bytes;       /* per regular file; 0: 256 MiB */
	uint64_t max_total_bytes;      /* all files together; 0: 1 GiB */
	uint64_t max_entries;	       /* 0: 100000 */
	unsigned int strip_components; /* leading path components to drop */
	bool no_symlinks; /* refuse every symlink (default: relative ones that stay inside) */
	sbx_docker_refused_fn refused;
	void *refused_payload;
} sbx_docker_extract_opts;

#define SBX_DOCKER_EXTRACT_OPTS_VERSION 1
#define SBX_DOCKER_EXTRACT_OPTS_INIT                                                               \
	{                                                                                          \
		.version = SBX_DOCKER_EXTRACT_OPTS_VERSION                                         \
	}

typedef struct sbx_docker_extract_stats {
	uint64_t entries;   /* entries seen */
	uint64_t extracted; /* entries written */
	uint64_t refused;   /* entries refused */
	uint64_t bytes;	    /* file bytes written */
} sbx_docker_extract_stats;

/*
 * Extracts a tar held in memory beneath the directory dirfd. The tar is
 * untrusted; the rules, entry by entry:
 *  - names must be relative, without `..`, at most 4096 bytes; a leading
 *    "./" and "/"-only components are ignored;
 *  - regular files, directories, symlinks and hardlinks only: device nodes,
 *    fifos, sockets are refused;
 *  - a symlink's target must be relative and stay inside (lexically, from
 *    the link's own directory); absolute or escaping targets are refused;
 *  - every write goes through openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)
 *    (sbx/path.h), so a later entry can never be written through a symlink,
 *    whatever the lexical checks missed;
 *  - a hardlink is extracted as a copy of an already extracted regular file
 *    inside the target (never a link to anything outside);
 *  - modes are masked to 0777 & ~022 plus owner write (no setuid/setgid/
 *    sticky); owners are not applied; existing files are replaced only when
 *    they are regular files;
 *  - caps on file size, total size and entry count: exceeding one STOPS the
 *    extraction (-EFBIG, -E2BIG) without reading the rest.
 * A refused entry is reported to opts->refused and skipped; the call then
 * returns -EPERM with err naming the first refused entry and the count.
 * opts and stats may be NULL.
 */
int sbx_docker_tar_extract(const void *tar, size_t len, int dirfd,
			   const sbx_docker_extract_opts *opts, sbx_docker_extract_stats *stats,
			   sbx_error *err);
