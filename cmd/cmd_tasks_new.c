/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl tasks new NAME|PATH [--format csv|ods|xlsx]: a task that
 * validates as it stands, to edit from there: task.yaml, a seedable
 * generator gen.py (Python, standard library only, run on the host), and
 * files/ and oracle/ made by it in the chosen format.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "sbx/grade.h"
#include "sbx/path.h"
#include "sbx/suggest.h"
#include "sbx/task.h"

typedef struct new_format {
	const char *name;   /* --format, and the files' extension */
	const char *prompt; /* the YAML block's lines */
	const char *sheet;  /* what the grading ranges are prefixed with */
} new_format;

static const new_format formats[] = {
	{"csv",
	 "  The workspace holds data.csv: a header line (Item,Quantity,Price) and ten\n"
	 "  items. Add a fourth column with the header Total: Quantity x Price,\n"
	 "  rounded to 2 decimals. Leave the other columns as they are and save the\n"
	 "  file in place as CSV: overwrite data.csv.\n",
	 ""},
	{"ods",
	 "  The workspace holds data.ods. Its sheet Sheet1 has a header row (Item,\n"
	 "  Quantity, Price) and ten items. Add a column D with the header Total:\n"
	 "  Quantity x Price, rounded to 2 decimals. Leave columns A-C as they are\n"
	 "  and save your work in place: overwrite data.ods (same name, ODS format).\n",
	 "'Sheet1'!"},
	{"xlsx",
	 "  The workspace holds data.xlsx. Its sheet Sheet1 has a header row (Item,\n"
	 "  Quantity, Price) and ten items. Add a column D with the header Total:\n"
	 "  Quantity x Price, rounded to 2 decimals. Leave columns A-C as they are\n"
	 "  and save your work in place: overwrite data.xlsx (same name, XLSX format).\n",
	 "'Sheet1'!"},
};

/* Arguments: id four times, the prompt, the extension three times, the sheet twice. */
static const char new_yaml[] =
	"# %s: made by 'sandboxctl tasks new'. Edit the prompt, gen.py and the grading;\n"
	"# 'sandboxctl tasks generate %s DIR' rewrites files/ and oracle/ (DIR: this folder),\n"
	"# 'sandboxctl tasks validate %s' checks it.\n"
	"id: %s\n"
	"title: Line totals\n"
	"difficulty: easy\n"
	"prompt: |\n"
	"%s"
	"files:\n"
	"  - files/data.%s\n"
	"outputs:\n"
	"  - data.%s\n"
	"oracle:\n"
	"  - oracle/expected.%s\n"
	"# Score only what the agent must produce; the given cells are a gate.\n"
	"grading:\n"
	"  tolerance: 0.01\n"
	"  cases:\n"
	"    - name: totals\n"
	"      ranges: [\"%sD1:D11\"]\n"
	"    - name: inputs unchanged\n"
	"      gate: true\n"
	"      skip_empty: false\n"
	"      tolerance: 0\n"
	"      ranges: [\"%sA1:C11\"]\n"
	"limits:\n"
	"  deadline: 300\n"
	"gui: false\n"
	"# Run on the host as: gen.py DIR [SEED] (seedable: run --seed N).\n"
	"generator: gen.py\n";

/* gen.py: the head, TASK_ID and FORMAT, then the rest (no printf escapes in these). */
static const char gen_head[] =
	"#!/usr/bin/env python3\n"
	"\"\"\"Makes an instance of the task: DIR/files/data.EXT, DIR/oracle/expected.EXT.\n"
	"\n"
	"Usage: gen.py DIR [SEED]. Without SEED: the committed files. The same seed\n"
	"must give the same bytes (no clock, no unseeded randomness): workbooks are\n"
	"written with the standard library alone, at a fixed zip date.\n"
	"\"\"\"\n"
	"import csv\n"
	"import os\n"
	"import random\n"
	"import sys\n"
	"import zipfile\n"
	"from decimal import ROUND_HALF_UP, Decimal\n"
	"from xml.sax.saxutils import escape\n"
	"\n";

static const char gen_tail[] =
	"HEADER = [\"Item\", \"Quantity\", \"Price\", \"Total\"]\n"
	"XML = '<?xml version=\"1.0\" encoding=\"UTF-8\"?>\\n'\n"
	"OOO = \"urn:oasis:names:tc:opendocument:xmlns:\"\n"
	"OOXML = \"http://schemas.openxmlformats.org/\"\n"
	"REL = OOXML + \"officeDocument/2006/relationships\"\n"
	"PKG = OOXML + \"package/2006/relationships\"\n"
	"CT = \"application/vnd.openxmlformats-officedocument.spreadsheetml.\"\n"
	"\n"
	"\n"
	"def rows_for(seed):\n"
	"    rng = random.Random(\"%s:%d\" % (TASK_ID, seed))\n"
	"    rows = []\n"
	"    for i in range(10):\n"
	"        qty = rng.randint(1, 50)\n"
	"        price = Decimal(rng.randint(100, 99999)) / 100\n"
	"        total = (qty * price).quantize(Decimal(\"0.01\"), ROUND_HALF_UP)\n"
	"        rows.append([\"Item %02d\" % (i + 1), qty, price, total])\n"
	"    return rows\n"
	"\n"
	"\n"
	"def write_csv(path, table):\n"
	"    with open(path, \"w\", newline=\"\") as f:\n"
	"        csv.writer(f, lineterminator=\"\\n\").writerows(table)\n"
	"\n"
	"\n"
	"def write_zip(path, parts):\n"
	"    \"\"\"parts: [(name, text)]; the first one stored (ODS's mimetype).\"\"\"\n"
	"    with zipfile.ZipFile(path, \"w\") as z:\n"
	"        for n, (name, text) in enumerate(parts):\n"
	"            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))\n"
	"            info.compress_type = zipfile.ZIP_DEFLATED if n else zipfile.ZIP_STORED\n"
	"            z.writestr(info, text)\n"
	"\n"
	"\n";

/* The workbook writers (a string of its own: C99 compilers need take only 4095 bytes). */
static const char gen_writers[] =
	"def ods_cell(v):\n"
	"    if isinstance(v, str):\n"
	"        return ('<table:table-cell office:value-type=\"string\">'\n"
	"                \"<text:p>%s</text:p></table:table-cell>\" % escape(v))\n"
	"    return ('<table:table-cell office:value-type=\"float\" office:value=\"%s\">'\n"
	"            \"<text:p>%s</text:p></table:table-cell>\" % (v, v))\n"
	"\n"
	"\n"
	"def write_ods(path, table):\n"
	"    ns = \" \".join('xmlns:%s=\"%s%s:1.0\"' % (p, OOO, p)\n"
	"                  for p in (\"office\", \"table\", \"text\", \"manifest\"))\n"
	"    rows = \"\".join(\"<table:table-row>%s</table:table-row>\"\n"
	"                   % \"\".join(map(ods_cell, r)) for r in table)\n"
	"    content = (XML + '<office:document-content %s office:version=\"1.2\">'\n"
	"               \"<office:body><office:spreadsheet>\"\n"
	"               '<table:table table:name=\"Sheet1\">%s</table:table>'\n"
	"               \"</office:spreadsheet></office:body>\"\n"
	"               \"</office:document-content>\\n\" % (ns, rows))\n"
	"    entry = ('<manifest:file-entry manifest:full-path=\"%s\" '\n"
	"             'manifest:media-type=\"%s\"/>')\n"
	"    manifest = (XML + '<manifest:manifest %s manifest:version=\"1.2\">' % ns\n"
	"                + entry % (\"/\", \"application/vnd.oasis.opendocument.spreadsheet\")\n"
	"                + entry % (\"content.xml\", \"text/xml\") + \"</manifest:manifest>\\n\")\n"
	"    write_zip(path, [(\"mimetype\", \"application/vnd.oasis.opendocument.spreadsheet\"),\n"
	"                     (\"META-INF/manifest.xml\", manifest), (\"content.xml\", content)])\n"
	"\n"
	"\n"
	"def xlsx_cell(ref, v):\n"
	"    if isinstance(v, str):\n"
	"        return '<c r=\"%s\" t=\"inlineStr\"><is><t>%s</t></is></c>' % (ref, escape(v))\n"
	"    return '<c r=\"%s\"><v>%s</v></c>' % (ref, v)\n"
	"\n"
	"\n"
	"def write_xlsx(path, table):\n"
	"    main = OOXML + \"spreadsheetml/2006/main\"\n"
	"    rels = XML + '<Relationships xmlns=\"%s\"><Relationship Id=\"rId1\" ' % PKG\n"
	"    rows = \"\".join('<row r=\"%d\">%s</row>' % (r, \"\".join(\n"
	"        xlsx_cell(\"ABCD\"[c] + str(r), v) for c, v in enumerate(row)))\n"
	"        for r, row in enumerate(table, 1))\n"
	"    types = ('<Default Extension=\"rels\" ContentType='\n"
	"             '\"application/vnd.openxmlformats-package.relationships+xml\"/>'\n"
	"             '<Default Extension=\"xml\" ContentType=\"application/xml\"/>'\n"
	"             '<Override PartName=\"/xl/workbook.xml\" '\n"
	"             'ContentType=\"%ssheet.main+xml\"/>'\n"
	"             '<Override PartName=\"/xl/worksheets/sheet1.xml\" '\n"
	"             'ContentType=\"%sworksheet+xml\"/>' % (CT, CT))\n"
	"    write_zip(path, [\n"
	"        (\"[Content_Types].xml\", XML + '<Types xmlns=\"%s'\n"
	"         'package/2006/content-types\">%s</Types>\\n' % (OOXML, types)),\n"
	"        (\"_rels/.rels\", rels + 'Type=\"%s/officeDocument\" '\n"
	"         'Target=\"xl/workbook.xml\"/></Relationships>\\n' % REL),\n"
	"        (\"xl/workbook.xml\", XML + '<workbook xmlns=\"%s\" xmlns:r=\"%s\"><sheets>'\n"
	"         '<sheet name=\"Sheet1\" sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>\\n'\n"
	"         % (main, REL)),\n"
	"        (\"xl/_rels/workbook.xml.rels\", rels + 'Type=\"%s/worksheet\" '\n"
	"         'Target=\"worksheets/sheet1.xml\"/></Relationships>\\n' % REL),\n"
	"        (\"xl/worksheets/sheet1.xml\", XML + '<worksheet xmlns=\"%s\"><sheetData>%s'\n"
	"         \"</sheetData></worksheet>\\n\" % (main, rows)),\n"
	"    ])\n"
	"\n"
	"\n"
	"def main():\n"
	"    out = sys.argv[1]\n"
	"    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0\n"
	"    rows = rows_for(seed)\n"
	"    write = {\"csv\": write_csv, \"ods\": write_ods, \"xlsx\": write_xlsx}[FORMAT]\n"
	"    for sub, name, cols in ((\"files\", \"data\", 3), (\"oracle\", \"expected\", 4)):\n"
	"        os.makedirs(os.path.join(out, sub), exist_ok=True)\n"
	"        table = [HEADER[:cols]] + [r[:cols] for r in rows]\n"
	"        write(os.path.join(out, sub, \"%s.%s\" % (name, FORMAT)), table)\n"
	"\n"
	"\n"
	"if __name__ == \"__main__\":\n"
	"    main()\n";

static const new_format *find_format(const char *name)
{
	const char *names[SBX_ELEMENTSOF(formats)];
	const char *near;

	for (size_t i = 0; i < SBX_ELEMENTSOF(formats); i++) {
		if (strcmp(name, formats[i].name) == 0)
			return &formats[i];
		names[i] = formats[i].name;
	}
	near = sbx_suggest(name, names, SBX_ELEMENTSOF(names));
	cli_error("tasks: new: --format '%s' is not csv, ods or xlsx%s%s%s", name,
		  near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
	return NULL;
}

static int write_new(const char *dir, const char *name, const char *text, mode_t mode,
		     sbx_error *err)
{
	_cleanup_free_ char *p = NULL;
	int r;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_path_write_beneath(dir, name, text, strlen(text), err);
	if (r >= 0 && chmod(p, mode) < 0)
		r = sbx_error_set(err, -errno, "'%s': %s", p, strerror(errno));
	return r;
}

/* task.yaml and gen.py written, the generator run, the result validated. */
static int scaffold(const char *dir, const char *id, const new_format *f,
		    const volatile sig_atomic_t *stop, sbx_error *err)
{
	_cleanup_free_ char *yaml = NULL, *gen = NULL;
	sbx_task *t = NULL;
	int r;

	if (asprintf(&yaml, new_yaml, id, id, id, id, f->prompt, f->name, f->name, f->name,
		     f->sheet, f->sheet) < 0 ||
	    asprintf(&gen, "%sTASK_ID = \"%s\"\nFORMAT = \"%s\"  # csv, ods or xlsx\n%s%s",
		     gen_head, id, f->name, gen_tail, gen_writers) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = write_new(dir, "task.yaml", yaml, 0644, err);
	if (r >= 0)
		r = write_new(dir, "gen.py", gen, 0755, err);
	if (r >= 0)
		r = cmd_tasks__load_unchecked(dir, &t, err);
	if (r >= 0)
		r = sbx_task_generate_until(t, NULL, dir, stop, err);
	t = sbx_task_free(t);
	if (r >= 0)
		r = sbx_task_load(dir, &t, err);
	if (r >= 0)
		r = sbx_grade_task_check(t, err);
	sbx_task_free(t);
	return r;
}

int cmd_tasks__new(const char *name, const char *tasks_dir, const char *format,
		   const volatile sig_atomic_t *stop)
{
	_cleanup_free_ char *dir = NULL;
	const char *id = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	const new_format *f = find_format(format ? format : "csv");
	sbx_error err = SBX_ERROR_INIT;
	int r;

	if (!f)
		return EXIT_USAGE;
	if (!sbx_task_id_valid(id)) {
		cli_error("tasks: new: '%s' is not a task id (1..64 of a-z 0-9 _ -)", id);
		return EXIT_USAGE;
	}
	if (strchr(name, '/') ? !(dir = strdup(name))
			      : asprintf(&dir, "%s/%s", tasks_dir, name) < 0)
		return EXIT_ENGINE;
	if (mkdir(dir, 0755) < 0) {
		cli_error("tasks: new: '%s': %s", dir, strerror(errno));
		return EXIT_USAGE;
	}
	r = scaffold(dir, id, f, stop, &err);
	if (*stop) {
		/* The folder is ours (mkdir above): no half-made task is left. */
		(void)sbx_path_remove_tree_at(AT_FDCWD, dir);
		cli_error("tasks: new: interrupted; '%s' removed", dir);
		return EXIT_INTERRUPTED;
	}
	if (r < 0) {
		cli_error("tasks: new: %s", err.msg);
		return EXIT_ENGINE;
	}
	printf("%s: created (task.yaml, gen.py, files/data.%s, oracle/expected.%s); it "
	       "validates.\n"
	       "Edit task.yaml and gen.py, then: sandboxctl tasks generate %s %s && "
	       "sandboxctl tasks validate %s\n",
	       dir, f->name, f->name, dir, dir, dir);
	return EXIT_PASS;
}
