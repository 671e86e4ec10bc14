/* SPDX-License-Identifier: MIT */
/*
 * clean_contacts (hard): names in any case with stray spaces, e-mails in
 * mixed case, sign-up dates as text in three formats; the agent writes the
 * cleaned name, the lower-case e-mail and the ISO date.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "../common/gen.h"

#define ROWS 40

static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
				     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* The word as typed: random case per letter, so it is never already clean. */
static void messy_word(gen_ctx *g, const char *w, char *out)
{
	size_t n = strlen(w);
	bool changed = false;

	for (size_t i = 0; i < n; i++) {
		int up = (int)gen_int(&g->rng, 0, 1);

		out[i] = (char)(up ? toupper((unsigned char)w[i]) : tolower((unsigned char)w[i]));
		changed |= out[i] != w[i];
	}
	if (!changed)
		out[0] = (char)tolower((unsigned char)out[0]);
	out[n] = '\0';
}

GEN_TASK(clean_contacts, 0x636f6e7461637473ull /* "contacts" */)
{
	static const char *const first[] = {"Alice", "Bruno", "Chiara", "Dmitri", "Elena",
					    "Farid", "Greta", "Hugo",	"Ines",	  "Jonas"};
	static const char *const last[] = {"Smith",  "Okafor", "Rossi",	 "Ivanova", "Garcia",
					   "Haddad", "Berg",   "Moreau", "Silva",   "Novak"};
	static const char *const domains[] = {"example.com", "mail.test", "corp.example"};
	static const char *const headers[] = {"Name",	    "Email",	   "Signup",
					      "Clean_Name", "Clean_Email", "Signup_ISO"};
	sbx_sheet *s, *o;
	sbx_book *bs = gen_book(g, "Contacts", &s), *bo = gen_book(g, "Contacts", &o);

	gen_headers(g, s, o, headers, 3, 6);
	for (uint32_t r = 1; r <= ROWS; r++) {
		const char *f = first[gen_int(&g->rng, 0, 9)], *l = last[gen_int(&g->rng, 0, 9)];
		const char *d = domains[gen_int(&g->rng, 0, 2)];
		int y = (int)gen_int(&g->rng, 2019, 2025), m = (int)gen_int(&g->rng, 1, 12);
		int day = (int)gen_int(&g->rng, 1, 28), fmt = (int)gen_int(&g->rng, 0, 2);
		char mf[32], ml[32], name[128], clean[128], email[160], cemail[160], date[32],
			iso[16];
		int pad = (int)gen_int(&g->rng, 0, 2);

		messy_word(g, f, mf);
		messy_word(g, l, ml);
		snprintf(name, sizeof(name), "%s%s %s%s%s", pad ? "  " : "", mf,
			 pad == 2 ? "   " : "", ml, pad ? " " : "  ");
		snprintf(clean, sizeof(clean), "%s %s", f, l);
		snprintf(cemail, sizeof(cemail), "%c%s.%u@%s", tolower((unsigned char)f[0]), l, r,
			 d);
		for (char *p = cemail; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		snprintf(email, sizeof(email), " %c%s.%u@%s ", f[0], ml, r, d);
		snprintf(iso, sizeof(iso), "%04d-%02d-%02d", y, m, day);
		if (fmt == 0)
			snprintf(date, sizeof(date), "%d/%d/%04d", m, day, y);
		else if (fmt == 1)
			snprintf(date, sizeof(date), "%d %s %04d", day, months[m - 1], y);
		else
			snprintf(date, sizeof(date), "%04d.%02d.%02d", y, m, day);
		gen_str2(g, s, o, r, 0, name);
		gen_str2(g, s, o, r, 1, email);
		gen_str2(g, s, o, r, 2, date);
		gen_str(g, o, r, 3, clean);
		gen_str(g, o, r, 4, cemail);
		gen_str(g, o, r, 5, iso);
	}
	gen_save(g, bs, "files/contacts.ods");
	gen_save(g, bo, "oracle/expected_contacts.ods");
}
