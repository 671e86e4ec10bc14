/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "relay-internal.h"
#include "sbx/cleanup.h"
#include "sbx/log.h"
#include "sbx/relay.h"

/* --- agent connections: the listener and its threads (requests: relay_client.c) --- */

static void *client_main(void *arg)
{
	client *c = arg;
	sbx_relay *r = c->r;
	sbx_stream *cs = NULL;

	if (sbx_stream_from_fds(&cs, c->fd, c->fd) == 0)
		sbx_relay__serve_client(c, cs);
	/* Leave the table before the fd closes, so nobody shuts down a reused number. */
	pthread_mutex_lock(&r->lock);
	if (r->clients[c->slot].conn == c->conn)
		r->clients[c->slot].fd = -1;
	pthread_mutex_unlock(&r->lock);
	if (cs)
		sbx_stream_close(cs);
	else
		close(c->fd);
	pthread_mutex_lock(&r->lock);
	r->n_threads--;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	free(c);
	return NULL;
}

/*
 * A slot for a new connection (the lock held): a free one, else the one that
 * has waited longest on its agent (tokenless connections first), whose
 * connection is shut down to end its thread. -1 when every one is busy.
 */
static int take_slot(sbx_relay *r)
{
	int victim = -1;

	for (unsigned i = 0; i < r->o.max_clients; i++) {
		const client_slot *s = &r->clients[i];

		if (s->fd < 0)
			return (int)i;
		if (s->busy)
			continue;
		if (victim < 0 || (!s->trusted && r->clients[victim].trusted) ||
		    (s->trusted == r->clients[victim].trusted &&
		     s->since < r->clients[victim].since))
			victim = (int)i;
	}
	/* Evicted threads linger until they see the shutdown; bound them too. */
	if (victim < 0 || r->n_threads >= 2 * r->o.max_clients)
		return -1;
	shutdown(r->clients[victim].fd, SHUT_RDWR);
	r->stats.evicted++;
	return victim;
}

static void *accept_main(void *arg)
{
	sbx_relay *r = arg;

	for (;;) {
		struct pollfd p[2] = {{.fd = r->listen_fd, .events = POLLIN},
				      {.fd = r->wake[0], .events = POLLIN}};
		client *c;
		pthread_t t;
		pthread_attr_t attr;
		int fd, one = 1, slot = -1;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents || __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept4(r->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c = calloc(1, sizeof(*c));
		pthread_mutex_lock(&r->lock);
		if (c)
			slot = take_slot(r);
		if (slot < 0) {
			pthread_mutex_unlock(&r->lock);
			close(fd); /* over the connection limit, every connection busy */
			free(c);
			continue;
		}
		*c = (client){.r = r, .fd = fd, .slot = slot, .conn = ++r->next_conn};
		r->clients[slot] = (client_slot){.fd = fd, .conn = c->conn, .since = sbx_now_ms()};
		r->n_threads++;
		pthread_mutex_unlock(&r->lock);
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, client_main, c) != 0) {
			pthread_mutex_lock(&r->lock);
			r->clients[slot].fd = -1;
			r->n_threads--;
			pthread_mutex_unlock(&r->lock);
			close(fd);
			free(c);
		}
		pthread_attr_destroy(&attr);
	}
	return NULL;
}

/* --- life cycle ------------------------------------------------------------ */

/*
 * Listens on a 0600 unix socket at path: bound in a fresh 0700 directory
 * beside it, so no other user can connect before the chmod, then renamed
 * into place (replacing a stale socket, never another kind of file).
 */
static int listen_unix(sbx_relay *r, const char *path, sbx_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *dir = NULL, *tmp = NULL;
	struct stat st;
	int k;

	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode))
		return sbx_error_set(err, -EEXIST, "relay: '%s' exists and is not a socket", path);
	if (asprintf(&dir, "%.*s/.relay-XXXXXX", slash ? (int)(slash - path) : 1,
		     slash ? path : ".") < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (strlen(path) >= sizeof(sa.sun_path) || strlen(dir) + 2 >= sizeof(sa.sun_path))
		return sbx_error_set(err, -ENAMETOOLONG,
				     "relay: unix socket path '%s' too long (at most %zu bytes, "
				     "%zu in its directory)",
				     path, sizeof(sa.sun_path) - 1, sizeof(sa.sun_path) - 17);
	if (!mkdtemp(dir))
		return sbx_error_set(err, -errno,
				     "relay: cannot create a directory beside '%s': %s", path,
				     strerror(errno));
	if (asprintf(&tmp, "%s/s", dir) < 0) {
		rmdir(dir);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	memcpy(sa.sun_path, tmp, strlen(tmp) + 1);
	r->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (r->listen_fd < 0 || bind(r->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(tmp, 0600) < 0 || listen(r->listen_fd, 128) < 0 || rename(tmp, path) < 0) {
		k = -errno;
		unlink(tmp);
		rmdir(dir);
		return sbx_error_set(err, k, "relay: cannot listen on unix:%s: %s", path,
				     strerror(-k));
	}
	rmdir(dir);
	r->unix_path = strdup(path);
	if (!r->unix_path) {
		unlink(path);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

int sbx_relay_start(sbx_relay **out, const sbx_relay_opts *opts, sbx_error *err)
{
	sbx_relay *r;
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	int one = 1, k;

	if (!opts || opts->version != SBX_RELAY_OPTS_VERSION || !opts->open)
		return sbx_error_set(err, -EINVAL, "relay: bad options");
	if (inet_pton(AF_INET, opts->bind_addr ? opts->bind_addr : "127.0.0.1", &sa.sin_addr) !=
		    1 ||
	    (ntohl(sa.sin_addr.s_addr) >> 24) != 127)
		return sbx_error_set(err, -EINVAL, "relay: '%s' is not an IPv4 loopback address",
				     opts->bind_addr);
	r = calloc(1, sizeof(*r));
	if (!r)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r->o = *opts;
	if (opts->token) {
		size_t tl = strlen(opts->token);

		if (tl == 0 || tl >= sizeof(r->token) ||
		    strspn(opts->token, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					"0123456789-_") != tl) {
			free(r);
			return sbx_error_set(err, -EINVAL, "relay: a token is 1-64 URL-safe bytes");
		}
		memcpy(r->token, opts->token, tl + 1);
	}
	r->o.token = r->token;
	if (!r->o.max_clients)
		r->o.max_clients = 64;
	if (!r->o.io_timeout_ms)
		r->o.io_timeout_ms = 15 * 60 * 1000;
	if (r->o.head_timeout_ms <= 0)
		r->o.head_timeout_ms = 10 * 1000;
	if (r->o.body_timeout_ms <= 0)
		r->o.body_timeout_ms = 30 * 1000;
	if (!r->o.max_buffered)
		r->o.max_buffered = 128 * 1024 * 1024;
	if (r->o.warm > POOL_MAX)
		r->o.warm = POOL_MAX;
	r->listen_fd = r->wake[0] = r->wake[1] = -1;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->clients = calloc(r->o.max_clients, sizeof(*r->clients));
	if (!r->clients) {
		sbx_relay_free(r);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	for (unsigned i = 0; i < r->o.max_clients; i++)
		r->clients[i].fd = -1;
	if (opts->transcript_path &&
	    (k = sbx_transcript_open(&r->transcript, opts->transcript_path, err)) < 0) {
		sbx_relay_free(r);
		return k;
	}
	if (pipe2(r->wake, O_CLOEXEC) < 0) {
		k = -errno;
		sbx_relay_free(r);
		return sbx_error_set(err, k, "relay: pipe: %s", strerror(-k));
	}
	if (opts->unix_path) {
		k = listen_unix(r, opts->unix_path, err);
		if (k < 0) {
			sbx_relay_free(r);
			return k;
		}
	} else {
		sa.sin_port = htons(opts->port);
		r->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (r->listen_fd < 0 ||
		    setsockopt(r->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		    bind(r->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
		    listen(r->listen_fd, 128) < 0 ||
		    getsockname(r->listen_fd, (struct sockaddr *)&sa, &sl) < 0) {
			k = -errno;
			sbx_relay_free(r);
			return sbx_error_set(err, k, "relay: cannot listen on 127.0.0.1:%u: %s",
					     opts->port, strerror(-k));
		}
		r->port = ntohs(sa.sin_port);
	}
	if (pthread_create(&r->accept_thread, NULL, accept_main, r) != 0) {
		sbx_relay_free(r);
		return sbx_error_set(err, -EAGAIN, "relay: cannot start a thread");
	}
	r->accept_started = true;
	if (pthread_create(&r->warm_thread, NULL, sbx_relay__warm_main, r) == 0)
		r->warm_started = true;
	*out = r;
	return 0;
}

uint16_t sbx_relay_port(const sbx_relay *r)
{
	return r->port;
}

void sbx_relay_close_listener(sbx_relay *r)
{
	if (!r || !r->accept_started)
		return;
	if (write(r->wake[1], "x", 1) < 0) {
		/* the pipe cannot be full: one byte is ever written */
	}
	pthread_join(r->accept_thread, NULL);
	r->accept_started = false;
	close(r->listen_fd);
	r->listen_fd = -1;
	if (r->unix_path)
		unlink(r->unix_path); /* nothing answers there any more */
}

void sbx_relay_get_stats(sbx_relay *r, sbx_relay_stats *out)
{
	pthread_mutex_lock(&r->lock);
	*out = r->stats;
	pthread_mutex_unlock(&r->lock);
	out->transcript_lines = sbx_transcript_count(r->transcript);
}

void sbx_relay_free(sbx_relay *r)
{
	struct timespec ts;

	if (!r)
		return;
	sbx_relay_close_listener(r);
	pthread_mutex_lock(&r->lock);
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&r->cond);
	for (unsigned i = 0; r->clients && i < r->o.max_clients; i++)
		if (r->clients[i].fd >= 0)
			shutdown(r->clients[i].fd, SHUT_RDWR);
	/* Connection threads see stop within a read slice (200 ms). */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	while (r->n_threads > 0)
		if (pthread_cond_timedwait(&r->cond, &r->lock, &ts) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&r->lock);
	if (r->warm_started)
		pthread_join(r->warm_thread, NULL);
	while (r->n_idle > 0) {
		sbx_stream *s = r->idle[--r->n_idle];

		if (r->o.give_back && !sbx_stream_stale(s))
			r->o.give_back(s, r->o.open_userdata);
		else
			sbx_stream_close(s);
	}
	if (r->n_threads > 0) {
		/* A thread stuck in a write to a dead peer: leak rather than crash. */
		sbx_log_warning("relay: %u connection(s) did not end in time", r->n_threads);
		return;
	}
	sbx_transcript_close(r->transcript);
	if (r->wake[0] >= 0)
		close(r->wake[0]);
	if (r->wake[1] >= 0)
		close(r->wake[1]);
	if (r->listen_fd >= 0) {
		close(r->listen_fd);
		if (r->unix_path)
			unlink(r->unix_path); /* a start that failed past the bind */
	}
	free(r->clients);
	free(r->unix_path);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r);
}
