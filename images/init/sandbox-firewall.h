/* SPDX-License-Identifier: MIT */
/*
 * sandbox-init's half of --network published, kept apart from the
 * supervisor: the egress firewall, fed to iptables-restore and
 * ip6tables-restore while PID 1 is still root (sandbox-caps.h checks that
 * no capability is left afterwards). Included by sandbox-init.c only (it is
 * built as one file, static, libc only); uses its say() and HTTP_PORT.
 */
#pragma once

/*
 * --network published: nothing leaves the box, IPv4 or IPv6. Only loopback and
 * replies go out; only loopback, replies and the server's port come in.
 * IPv4 also blocks Docker's embedded resolver (127.0.0.11, DNAT'd on
 * loopback) should the sandbox ever join a user-defined network.
 */
static const char firewall_rules[] =
	"*filter\n"
	":INPUT DROP [0:0]\n"
	":FORWARD DROP [0:0]\n"
	":OUTPUT DROP [0:0]\n"
	"-A INPUT -i lo -j ACCEPT\n"
	"-A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT\n"
	"-A INPUT -p tcp --dport " HTTP_PORT " -j ACCEPT\n"
	"%s"
	"-A OUTPUT -o lo -j ACCEPT\n"
	"-A OUTPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT\n"
	"COMMIT\n";

/* Feeds the rules to `prog` (iptables-restore or ip6tables-restore) and waits for it. */
static int restore_rules(const char *prog, bool v4)
{
	char rules[sizeof(firewall_rules) + 64];
	int p[2], status, n;
	pid_t pid;

	n = snprintf(rules, sizeof(rules), firewall_rules,
		     v4 ? "-A OUTPUT -d 127.0.0.11/32 -j DROP\n" : "");
	if (n < 0 || (size_t)n >= sizeof(rules))
		return -E2BIG;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (pid == 0) {
		char *argv[] = {(char *)prog, NULL};

		dup2(p[0], STDIN_FILENO);
		execvp(prog, argv);
		fprintf(stderr, "sandbox-init: cannot run '%s': %s\n", prog, strerror(errno));
		_exit(EXIT_CANNOT_RUN);
	}
	close(p[0]);
	if (write(p[1], rules, (size_t)n) != (ssize_t)n)
		say("%s: short write of the rules", prog);
	close(p[1]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		say("%s failed (status %d)", prog, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -EIO;
	}
	return 0;
}
