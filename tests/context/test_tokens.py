"""Offline token counting: special-token text is content, counts are cached by content."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxtop.context.window import tokens as tokens_module
from ctxtop.context.window.tokens import EncodingUnavailable, TokenCounter, load_encoding, token_length


def test_special_token_text_is_counted_as_ordinary_text(counter):
    assert counter.count("<|endoftext|>") > 1  # encode() would raise, or count it as 1 special token


def test_counts_are_cached_by_content():
    counter = TokenCounter()
    long_text = "word " * 500
    first = counter.count(long_text)
    assert counter.count("".join(["word "] * 500)) == first
    assert counter.encoded == 1


def test_known_count(counter):
    assert counter.count("hello world") == 2


@pytest.mark.parametrize("name, message", [("nope_base", "unknown encoding"), ("o200k_base", "ctxtop does not download")])
def test_unavailable_encodings_fail_in_one_line(name, message, monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty cache: nothing to load offline
    with pytest.raises(EncodingUnavailable, match=message) as info:
        TokenCounter(name)
    assert "\n" not in str(info.value)


ENCODING = load_encoding("cl100k_base")
# Letters, digits, CJK, apostrophes (contractions), punctuation and every kind of blank: where the
# encoding's pre-split is subtle.
_PIECES = st.sampled_from(["a", "Z", "é", "7", "42", "订单", " ", "  ", "\t", "\n", "\r\n", "\n\n", "'s", "'", ".", "!?",
                           "<|endoftext|>", "_", "-", "{", "}", "\u00a0", "😀",
                           # base64 and minified JSON (no newline to cut at), other digits, combining marks
                           "+", "/", "=", "Qm9", "x9Z", '":"', '","', "²", "Ⅻ", "٣", "e\u0301", "'S", "'ll"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=120).map("".join))
def test_a_long_text_counts_the_same_in_segments_as_whole(text):
    encode = ENCODING.encode_ordinary
    assert token_length(encode, text, segment=3) == len(encode(text))


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=120).map("".join), st.integers(1, 12))
def test_a_text_cut_only_where_no_piece_spans_counts_the_same_as_whole(text, segment):
    # Cut at every place the segment rule finds (searching far enough that no cut is forced).
    encode = ENCODING.encode_ordinary
    assert token_length(encode, text, segment=segment, search=len(text) + 1) == len(encode(text))


def test_a_single_line_of_base64_is_tokenized_in_bounded_pieces_and_counted_exactly():
    # Issue 18, item 17: a 200 MB base64 line (no newline) was tokenized whole: 4 GB at 200 MB.
    import base64
    import random

    text = base64.b64encode(random.Random(7).randbytes(1_500_000)).decode()
    assert "\n" not in text and len(text) == 2_000_000
    longest = []

    def encode(piece):
        longest.append(len(piece))
        return ENCODING.encode_ordinary(piece)

    assert token_length(encode, text) == len(ENCODING.encode_ordinary(text))
    assert max(longest) <= tokens_module.SEGMENT_CHARS + tokens_module.SEARCH_CHARS  # a constant, not the text
    assert len(longest) >= len(text) // (tokens_module.SEGMENT_CHARS + tokens_module.SEARCH_CHARS)


def test_a_text_with_nowhere_to_cut_is_still_tokenized_in_bounded_pieces():
    longest = []
    text = "a" * 1_000_000  # one piece of the pre-split: no exact cut exists
    count = token_length(lambda piece: longest.append(len(piece)) or ENCODING.encode_ordinary(piece), text)
    assert max(longest) <= tokens_module.SEGMENT_CHARS + tokens_module.SEARCH_CHARS
    assert abs(count - len(ENCODING.encode_ordinary(text))) <= len(longest)  # a token or so per forced cut


def test_a_long_text_digests_the_same_in_pieces():
    text = "订单 😀 \ud800 x" * 200_000
    assert len(text) > tokens_module.DIGEST_PIECE_CHARS
    import xxhash

    whole = xxhash.xxh3_128_digest(text.encode("utf-8", "surrogatepass"))
    assert tokens_module.content_key(text) == whole


def test_a_multi_megabyte_output_counts_the_same_in_segments():
    counter = TokenCounter()
    text = "\n".join(f"{i:>5}: order {i} shipped to 仓库 {i % 7}; total ¥{i * 3}.00" for i in range(60_000))
    assert len(text) > 2_000_000
    assert counter._token_length(text) == len(counter._encoding.encode_ordinary(text))


def test_counting_on_both_cores_gives_the_counts_of_one(monkeypatch):
    texts = [f"line {i}: order {i * 7} shipped\n" * (i % 50 + 1) for i in range(300)] + ["", "same", "same"]
    one = [TokenCounter().count(text) for text in texts]
    monkeypatch.setattr("ctxtop.context.window.tokens.PARALLEL_MIN_CHARS", 0)
    monkeypatch.setattr("ctxtop.context.window.tokens._WORKERS", 2)
    pools = []
    original = tokens_module._pool
    monkeypatch.setattr(tokens_module, "_pool", lambda: pools.append(1) or original())
    counter = TokenCounter(parallel=True)
    assert counter.count_all(texts) == one
    assert counter.encoded == len({t for t in texts if t})  # each text tokenized once
    assert pools  # on the pool, not one by one
