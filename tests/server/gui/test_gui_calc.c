/* SPDX-License-Identifier: MIT */
/*
 * End to end on a real application: LibreOffice Calc on a private Xvfb.
 * The GUI tools click into the sheet, type into A1 and A2 (text with
 * characters the keymap lacks, and a formula), save with ctrl+s, and a
 * separate headless LibreOffice reads the saved file back as CSV.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>

#include "check_main.h"
#include "test_files.h"
#include "gui-test.h"
#include "session.h"
#include "sbx/util.h"
#include "xvfb.h"

static test_xvfb xvfb;
static char dir[64];

/* Keeps the first start quiet: no tip-of-the-day dialog to steal the keyboard. */
static const char registry[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<oor:items xmlns:oor=\"http://openoffice.org/2001/registry\" "
	"xmlns:xs=\"http://www.w3.org/2001/XMLSchema\" "
	"xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">\n"
	"<item oor:path=\"/org.openoffice.Office.Common/Misc\"><prop oor:name=\"ShowTipOfTheDay\" "
	"oor:op=\"fuse\"><value>false</value></prop></item>\n"
	"<item oor:path=\"/org.openoffice.Office.Common/Misc\"><prop oor:name=\"FirstRun\" "
	"oor:op=\"fuse\"><value>false</value></prop></item>\n"
	"</oor:items>\n";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	ck_assert_msg(f, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

static void calc_setup(void)
{
	char path[256];

	strcpy(dir, "/tmp/sbx-gui-calc-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/profile", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/profile/user", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/profile/user/registrymodifications.xcu", dir);
	write_file(path, registry);
	ck_assert_msg(test_xvfb_start(&xvfb, 1280, 720) == 0, "cannot start Xvfb");
}

static void calc_teardown(void)
{
	char path[256];
	FILE *f;
	int pgid;

	/* The test child records LibreOffice's process group; make sure it is gone. */
	snprintf(path, sizeof(path), "%s/soffice.pgid", dir);
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%d", &pgid) == 1 && pgid > 1)
			kill(-pgid, SIGKILL);
		fclose(f);
	}
	test_xvfb_stop(&xvfb);
	sbx_path_remove_tree_at(AT_FDCWD, dir);
}

/* Runs soffice headless with our profile and waits (bounded) for it. */
static void soffice_headless(const char *convert_to, const char *outdir, const char *input)
{
	char profile[128], log[128];
	snprintf(profile, sizeof(profile), "-env:UserInstallation=file://%s/profile", dir);
	snprintf(log, sizeof(log), "%s/headless.log", dir);
	char *argv[] = {
		"soffice",	    "--headless", "--norestore",  profile,	 "--convert-to",
		(char *)convert_to, "--outdir",	  (char *)outdir, (char *)input, NULL};
	pid_t pid = test_spawn(argv, NULL, log);
	double deadline = test_now_ms() + 120000;
	int status;

	ck_assert_int_gt(pid, 0);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (test_now_ms() > deadline) {
			test_kill(pid, 1000);
			ck_abort_msg("soffice --convert-to %s timed out", convert_to);
		}
		usleep(50000);
	}
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "soffice --convert-to failed");
}

static bool window_title_has(Display *d, Window w, const char *needle)
{
	Atom utf8 = XInternAtom(d, "UTF8_STRING", False);
	Atom net_name = XInternAtom(d, "_NET_WM_NAME", False);
	Atom type;
	int format;
	unsigned long n, after;
	unsigned char *data = NULL;
	char *name = NULL;
	bool found = false;

	if (XGetWindowProperty(d, w, net_name, 0, 1024, False, utf8, &type, &format, &n, &after,
			       &data) == Success &&
	    data) {
		found = strstr((char *)data, needle) != NULL;
		XFree(data);
	}
	if (!found && XFetchName(d, w, &name) && name) {
		found = strstr(name, needle) != NULL;
		XFree(name);
	}
	return found;
}

/* Polls the top-level windows for a viewable one whose title has needle. */
static bool find_window(const char *needle, int timeout_ms, XWindowAttributes *attr)
{
	Display *d = XOpenDisplay(xvfb.display);
	double deadline = test_now_ms() + timeout_ms;
	bool found = false;

	ck_assert_ptr_nonnull(d);
	while (!found && test_now_ms() < deadline) {
		Window root, parent, *kids = NULL;
		unsigned n = 0;

		if (XQueryTree(d, DefaultRootWindow(d), &root, &parent, &kids, &n)) {
			for (unsigned i = 0; i < n && !found; i++)
				found = XGetWindowAttributes(d, kids[i], attr) &&
					attr->map_state == IsViewable &&
					window_title_has(d, kids[i], needle);
			if (kids)
				XFree(kids);
		}
		if (!found)
			usleep(100000);
	}
	XCloseDisplay(d);
	return found;
}

static void call_ok(const char *tool, const char *args)
{
	tool_result r;

	ck_assert_int_eq(test_call(tool, args, &r), 0);
	ck_assert_msg(r.error_kind == TOOL_OK, "%s %s: %s", tool, args, r.error ? r.error : "?");
	tool_result_clear(&r);
}

static time_t mtime_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_mtime : 0;
}

START_TEST(calc_type_save_and_read_back)
{
	char csv[128], ods[128], profile[128], log[128], pgid_path[128], args[256];
	XWindowAttributes attr;
	double t0 = test_now_ms();

	snprintf(csv, sizeof(csv), "%s/start.csv", dir);
	snprintf(ods, sizeof(ods), "%s/start.ods", dir);
	write_file(csv, "seed\n");
	soffice_headless("ods", dir, csv);
	ck_assert_int_ne(mtime_of(ods), 0);
	/* Old enough that a save within the same second still shows. */
	struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
	utimensat(AT_FDCWD, ods, old, 0);

	snprintf(profile, sizeof(profile), "-env:UserInstallation=file://%s/profile", dir);
	snprintf(log, sizeof(log), "%s/calc.log", dir);
	char *argv[] = {"soffice", "--calc", "--norestore", profile, ods, NULL};
	pid_t pid = test_spawn(argv, xvfb.display, log);
	ck_assert_int_gt(pid, 0);
	snprintf(pgid_path, sizeof(pgid_path), "%s/soffice.pgid", dir);
	snprintf(args, sizeof(args), "%d\n", pid);
	write_file(pgid_path, args);

	ck_assert_msg(find_window("start.ods", 90000, &attr), "no LibreOffice window within 90 s");
	printf("calc window %dx%d+%d+%d after %.1f s\n", attr.width, attr.height, attr.x, attr.y,
	       (test_now_ms() - t0) / 1000);
	usleep(500000); /* let the first paint and focus handling finish */

	test_display = xvfb.display;
	/* Click into the grid (focus), then go to A1 and type. */
	snprintf(args, sizeof(args), "{\"x\":%d,\"y\":%d}", attr.x + attr.width / 2,
		 attr.y + attr.height / 2);
	call_ok("click", args);
	call_ok("key_press", "{\"key\":\"ctrl+Home\"}");
	call_ok("type_text", "{\"text\":\"Grüße € 42 Ж中\\n\"}");
	double t1 = test_now_ms();
	call_ok("computer", "{\"action\":\"type\",\"text\":\"=6*7\\n\"}");
	printf("computer type + settled screenshot: %.0f ms\n", test_now_ms() - t1);
	call_ok("computer", "{\"action\":\"key\",\"text\":\"ctrl+s\"}");

	double deadline = test_now_ms() + 30000;
	while (mtime_of(ods) == 1000000000 && test_now_ms() < deadline)
		usleep(100000);
	ck_assert_msg(mtime_of(ods) != 1000000000, "ctrl+s did not save within 30 s");
	usleep(300000);
	test_kill(pid, 5000);
	gui_session_close_all();

	char outdir[128], out_csv[160], text[512] = {0};
	snprintf(outdir, sizeof(outdir), "%s/out", dir);
	soffice_headless("csv:Text - txt - csv (StarCalc):44,34,76", outdir, ods);
	snprintf(out_csv, sizeof(out_csv), "%s/start.csv", outdir);
	FILE *f = fopen(out_csv, "re");
	ck_assert_msg(f, "no CSV from the saved file");
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	ck_assert_msg(strncmp(text, "Grüße € 42 Ж中\n42", strlen("Grüße € 42 Ж中\n42")) == 0,
		      "saved sheet reads back as '%s'", text);
	printf("calc round trip in %.1f s\n", (test_now_ms() - t0) / 1000);
}
END_TEST

static void add_cases(Suite *s)
{
	TCase *tc = SBX_TEST_CASE(s, "calc", NULL, NULL, 280, calc_type_save_and_read_back);

	tcase_add_unchecked_fixture(tc, calc_setup, calc_teardown);
}

SBX_TEST_MAIN("gui-calc", add_cases)
