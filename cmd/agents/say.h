/* SPDX-License-Identifier: MIT */
#pragma once

/* The agent's name for its stderr lines ("demo-agent"); each program defines it. */
extern const char *const agent_name;

/*
 * "<agent_name>: <message>\n" on stderr, the message escaped as
 * sbx_escape_controls() does (controls, C1, bidi, newlines), so a model's text
 * or a provider's error cannot drive the terminal.
 */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
