/* SPDX-License-Identifier: MIT */
/*
 * The model agent's memory bound: a reply's values are counted before it is
 * parsed, a tool result is cut with a note that stays UTF-8, and a
 * conversation over its budget loses its oldest big pieces (never the task's
 * prompt or the latest turn) while staying a request both protocols take.
 */
#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include "llm.h"

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);

	ck_assert_ptr_nonnull(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

START_TEST(values_are_counted_unparsed)
{
	static const char many[] = "{\"a\":[0,0,0,{\"b\":[]}],\"c\":\"x\"}";
	static const char str[] = "[\"a,b,[c{\\\",\"]";

	/* the object, a's list, three 0s, {}, b's list, c: 8 values (an empty list counts one) */
	ck_assert_uint_eq(llm_json_values(many, strlen(many)), 9);
	/* Commas and brackets inside a string, an escaped quote among them, are not values. */
	ck_assert_uint_eq(llm_json_values(str, strlen(str)), 2);
}
END_TEST

START_TEST(a_cut_says_so_and_stays_utf8)
{
	char *t = malloc(2 * 3000 + 1);

	for (int i = 0; i < 3000; i++)
		memcpy(t + 2 * i, "\xc3\xa9", 2);
	t[6000] = '\0';
	ck_assert_uint_le(llm_cut(&t, 1001, "a test"), 1001);
	ck_assert_ptr_nonnull(strstr(t, "bytes cut by sandbox-llm-agent: a test]"));
	/* the kept part ends on a whole character: the note's newline follows an é */
	ck_assert_int_eq(strchr(t, '\n')[-1], (char)0xa9);
	ck_assert_uint_eq(llm_cut(&t, 1 << 20, "a test"), strlen(t)); /* short: kept */
	free(t);
}
END_TEST

START_TEST(old_turns_give_way_to_the_budget)
{
	char *big = repeat('y', 5000), *prompt = repeat('p', 2000), *text;
	cJSON *msgs = cJSON_CreateArray(), *m, *calls, *args, *img, *part;
	size_t left;

	llm_add_message(msgs, "user", cJSON_CreateString(prompt));
	/* An OpenAI turn: tool_calls kept as text, their arguments JSON text in a string. */
	calls = cJSON_CreateArray();
	args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "v", big);
	text = cJSON_PrintUnformatted(args);
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "id", "call_0");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "function"), "arguments", text);
	cJSON_AddItemToArray(calls, m);
	free(text);
	cJSON_Delete(args);
	cJSON_AddItemToObject(llm_add_message(msgs, "assistant", cJSON_CreateNull()), "tool_calls",
			      llm_compact(calls));
	cJSON_Delete(calls);
	llm_add_message(msgs, "tool", cJSON_CreateString(big));
	/* Its screenshot, and an Anthropic tool_use whose input is an object. */
	img = cJSON_CreateArray();
	part = cJSON_CreateObject();
	cJSON_AddStringToObject(part, "type", "image_url");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(part, "image_url"), "url", big);
	cJSON_AddItemToArray(img, part);
	llm_add_message(msgs, "user", img);
	m = cJSON_Parse("[{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{}}]");
	cJSON_AddStringToObject(cJSON_GetObjectItem(cJSON_GetArrayItem(m, 0), "input"), "v", big);
	llm_add_message(msgs, "assistant", llm_compact(m));
	cJSON_Delete(m);
	/* The latest turn (from index 5): kept whole. */
	llm_add_message(msgs, "assistant", cJSON_CreateString(big));
	llm_add_message(msgs, "tool", cJSON_CreateString(big));

	left = llm_trim(msgs, 5, 24 << 10);
	text = cJSON_PrintUnformatted(msgs);
	ck_assert_uint_eq(left, strlen(text) - (cJSON_GetArraySize(msgs) + 1)); /* , and [] */
	ck_assert_uint_le(left, 24 << 10);
	ck_assert_str_eq(
		cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "content")),
		prompt);
	ck_assert_str_eq(
		cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 6), "content")),
		big);
	/* Only the oldest went: the first turn's arguments (still a JSON object) and output. */
	ck_assert_ptr_nonnull(strstr(text, "\"arguments\":\"{\\\"elided\\\":\\\"[5008 bytes elided "
					   "by sandbox-llm-agent: the conversation is kept "
					   "within 24 KiB]\\\"}\""));
	ck_assert_ptr_nonnull(strstr(text, "\"content\":\"[5000 bytes elided"));
	ck_assert_ptr_nonnull(strstr(text, big)); /* the image and the input were not needed */
	free(text);

	/* A smaller budget: the image becomes a text part, the input an object. */
	llm_trim(msgs, 5, 14 << 10);
	text = cJSON_PrintUnformatted(msgs);
	ck_assert_ptr_nonnull(strstr(text, "{\"type\":\"text\",\"text\":\"["));
	ck_assert_ptr_nonnull(strstr(text, "\"input\":{\"elided\":"));
	ck_assert_ptr_null(strstr(text, "image_url"));
	free(text);
	cJSON_Delete(msgs);
	free(big);
	free(prompt);
}
END_TEST

/* Pieces too small to elide, by the thousand: the oldest turns go whole. */
START_TEST(many_small_pieces_drop_whole_turns)
{
	char *small = repeat('s', 900), *text;
	cJSON *msgs = cJSON_CreateArray(), *content;
	size_t left;

	llm_add_message(msgs, "user", cJSON_CreateString("the prompt"));
	for (int turn = 0; turn < 2000; turn++) {
		llm_add_message(msgs, "assistant", cJSON_CreateString(small));
		for (int k = 0; k < 3; k++)
			llm_add_message(msgs, "tool", cJSON_CreateString(small));
	}
	/* The latest turn (its four messages) is kept whole. */
	left = llm_trim(msgs, (size_t)cJSON_GetArraySize(msgs) - 4, 64 << 10);
	text = cJSON_PrintUnformatted(msgs);
	ck_assert_uint_le(left, 64 << 10);
	ck_assert_uint_eq(left, strlen(text) - (cJSON_GetArraySize(msgs) + 1));
	ck_assert_int_eq(cJSON_GetArraySize(msgs) % 4, 1); /* whole turns went */
	ck_assert_int_ge(cJSON_GetArraySize(msgs), 5);
	content = cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "content");
	ck_assert_str_eq(cJSON_GetStringValue(content), "the prompt");
	ck_assert_str_eq(
		cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 1), "role")),
		"assistant");
	free(text);
	cJSON_Delete(msgs);
	free(small);
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "budget", NULL, NULL, 0, values_are_counted_unparsed,
		      a_cut_says_so_and_stays_utf8, old_turns_give_way_to_the_budget,
		      many_small_pieces_drop_whole_turns);
}

SBX_TEST_MAIN("llm-budget", add_cases)
