#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The fake provider's checks refuse what a real provider refuses: each bad
request below must raise a Violation, each good one must pass. Without this,
a check that never fires would let the model agent's tests pass on requests
OpenAI or Anthropic reject. No engine, no network.
"""
import base64
import copy
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.argv = [sys.argv[0], os.path.join(tempfile.mkdtemp(prefix="sbx-fake-unit-"), "state.json"),
            "sk-unit"]
sys.path.insert(0, HERE)
import fake_provider as fp  # noqa: E402

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 32).decode()
OPENAI_H = {"Authorization": "Bearer sk-unit"}
ANTHROPIC_H = {"x-api-key": "sk-unit", "anthropic-version": "2023-06-01"}
TOOL_SCHEMA = {"type": "object", "properties": {
    "values": {"type": "array", "items": {"type": "array", "items": {"type": ["string", "number"]}}}}}

OPENAI_OK = {
    "model": "m",
    "tools": [{"type": "function", "function": {"name": "take_screenshot", "description": "d",
                                                "parameters": TOOL_SCHEMA}}],
    "messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_0_0", "type": "function",
             "function": {"name": "take_screenshot", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_0_0", "content": "{}"},
        {"role": "user", "content": [
            {"type": "text", "text": "Images returned by the tools above:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG}}]},
    ]}

ANTHROPIC_OK = {
    "model": "m", "max_tokens": 10, "system": "sys",
    "tools": [{"name": "computer", "description": "d", "input_schema": TOOL_SCHEMA}],
    "messages": [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "step 0"},
            {"type": "tool_use", "id": "toolu_0_0", "name": "computer",
             "input": {"action": "screenshot"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_0_0", "content": [
                {"type": "text", "text": "{}"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": PNG}}]},
            {"type": "text", "text": "go on"}]},
    ]}


def openai_bad(edit):
    b = copy.deepcopy(OPENAI_OK)
    edit(b, b["messages"], b["messages"][4]["content"][1])
    return b


def anthropic_bad(edit):
    b = copy.deepcopy(ANTHROPIC_OK)
    edit(b, b["messages"], b["messages"][2]["content"][0]["content"][1])
    return b


def set_(d, k, v):
    d[k] = v


BAD_OPENAI = {
    "array without items": lambda b, m, img: b["tools"][0]["function"]["parameters"][
        "properties"]["values"]["items"].pop("items"),
    "image message not after the tool answers": lambda b, m, img: m.insert(2, m.pop(4)),
    "image url not a data: URL": lambda b, m, img: set_(img["image_url"], "url", "file:///x.png"),
    "image data not a PNG": lambda b, m, img: set_(
        img["image_url"], "url", "data:image/png;base64," + base64.b64encode(b"GIF89a").decode()),
    "image part with another key": lambda b, m, img: set_(img, "source", {}),
    "an image inside the tool message": lambda b, m, img: set_(m[3], "content", [img]),
    "unknown part type": lambda b, m, img: set_(img, "type", "image"),
}
BAD_ANTHROPIC = {
    "array without items": lambda b, m, img: b["tools"][0]["input_schema"]["properties"][
        "values"].pop("items"),
    "tool_result not first": lambda b, m, img: m[2]["content"].reverse(),
    "image source not base64": lambda b, m, img: set_(img, "source", {
        "type": "url", "url": "https://example.invalid/x.png"}),
    "image without media_type": lambda b, m, img: img["source"].pop("media_type"),
    "image without data": lambda b, m, img: img["source"].pop("data"),
    "image data not base64": lambda b, m, img: set_(img["source"], "data", "not base64!"),
    "image in the OpenAI shape": lambda b, m, img: m[2]["content"][0]["content"].__setitem__(
        1, {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG}}),
    "empty text block": lambda b, m, img: set_(m[1]["content"][0], "text", ""),
    "tool_result in an assistant message": lambda b, m, img: m[1]["content"].append(
        {"type": "tool_result", "tool_use_id": "x", "content": "y"}),
}


def refused(check, h, body):
    try:
        check(h, body)
    except fp.Violation:
        return True
    return False


def main():
    bad = []
    if refused(fp.check_openai, OPENAI_H, OPENAI_OK):
        bad.append("openai: the good request was refused")
    if refused(fp.check_anthropic, ANTHROPIC_H, ANTHROPIC_OK):
        bad.append("anthropic: the good request was refused")
    if not fp.image_answers(OPENAI_OK["messages"], False, "call_0_0"):
        bad.append("openai: the screenshot's image was not found")
    if not fp.image_answers(ANTHROPIC_OK["messages"], True, "toolu_0_0"):
        bad.append("anthropic: the screenshot's image was not found")
    no_img = copy.deepcopy(ANTHROPIC_OK["messages"])
    no_img[2]["content"][0]["content"].pop(1)
    if fp.image_answers(no_img, True, "toolu_0_0"):
        bad.append("anthropic: an answer without an image counted as one")
    for name, edit in BAD_OPENAI.items():
        if not refused(fp.check_openai, OPENAI_H, openai_bad(edit)):
            bad.append("openai: accepted " + name)
    for name, edit in BAD_ANTHROPIC.items():
        if not refused(fp.check_anthropic, ANTHROPIC_H, anthropic_bad(edit)):
            bad.append("anthropic: accepted " + name)
    for b in bad:
        print("FAIL", b)
    print("%d checks, %d failed" % (5 + len(BAD_OPENAI) + len(BAD_ANTHROPIC), len(bad)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
