/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Scope-bound cleanup (after systemd's macro.h): ownership is visible in the
 * declaration and early returns cannot leak. TAKE_PTR hands a value on and
 * disarms the cleanup.
 */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <errno.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void sbx_freep(void *p)
{
	free(*(void **)p);
}

static inline void sbx_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void sbx_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_free_	 _cleanup_(sbx_freep)
#define _cleanup_close_	 _cleanup_(sbx_closep)
#define _cleanup_fclose_ _cleanup_(sbx_fclosep)

/* Defines a static inline `name##p(type **)` that calls fn on a non-NULL value. */
#define SBX_DEFINE_CLEANUP(type, fn)                                                               \
	__attribute__((unused)) static inline void fn##p(type **p)                                 \
	{                                                                                          \
		if (*p)                                                                            \
			fn(*p);                                                                    \
	}

/* Returns the pointer and sets the variable to NULL (ownership moves). */
#define TAKE_PTR(ptr)                                                                              \
	__extension__({                                                                            \
		__typeof__(ptr) *_at_ = &(ptr); /* ptr is evaluated once: p[--n] is safe */        \
		__typeof__(ptr) _took_ = *_at_;                                                    \
		*_at_ = NULL;                                                                      \
		_took_;                                                                            \
	})

/* Returns the fd and sets the variable to -1. */
#define TAKE_FD(fd)                                                                                \
	__extension__({                                                                            \
		int _fd_ = (fd);                                                                   \
		(fd) = -1;                                                                         \
		_fd_;                                                                              \
	})

#define SBX_ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* free() on each of the n pointers in p; NULL ones are skipped like free() skips them. */
static inline void sbx_free_many(void *const *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i]);
}

/*
 * sbx_free_all(s->a, s->b, s->c): free() on each argument (systemd's
 * free_many_charp()), for the destructors that release a struct's strings
 * and arrays. The arguments are read before anything is freed, and each once.
 */
#define sbx_free_all(...)                                                                          \
	sbx_free_many((void *const[]){__VA_ARGS__}, SBX_ELEMENTSOF(((void *const[]){__VA_ARGS__})))

/* Frees a NULL-terminated string vector and its strings; accepts NULL. */
static inline void sbx_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

/* Frees the first n strings of v, then v; accepts NULL (v need not be NULL-terminated). */
static inline void sbx_strv_free_n(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}
