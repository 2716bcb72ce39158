"""--redact: what is masked, and that it reaches every text ctxtop writes."""

from __future__ import annotations

import json

import pytest

from ctxtop.context.output.redact import redact, redact_text
from ctxtop.tui.cli import main

CASES = [
    ("key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 here", "key [REDACTED:api_key] here"),
    ("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz123456", "OPENAI_API_KEY=[REDACTED:api_key]"),
    ("aws AKIAIOSFODNN7EXAMPLE", "aws [REDACTED:api_key]"),
    ("gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", "gh [REDACTED:token]"),
    ("Authorization: Bearer abcdef0123456789abcdef", "Authorization: Bearer [REDACTED:token]"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt [REDACTED:token]"),
    ("password=hunter2 and more", "password=[REDACTED:secret] and more"),
    ('{"api_key": "abc123"}', '{"api_key": "[REDACTED:secret]"}'),
    ("mail ops@example.com now", "mail [REDACTED:email] now"),
    ("手机 13800138000 联系", "手机 [REDACTED:phone] 联系"),
    ("call +86 138-0013-8000", "call [REDACTED:phone]"),
    ("call +1 (415) 555-2671", "call [REDACTED:phone]"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "[REDACTED:private_key]"),
    ("order PO-0101 total 8000 元", "order PO-0101 total 8000 元"),  # plain business data stays
    ("git sha 1f2e3d4c5b6a79881726354433221100aabbccdd", "git sha 1f2e3d4c5b6a79881726354433221100aabbccdd"),
    # What a preview cut short leaves of one: too short for the patterns, still part of the secret.
    ("…deploy token ghp_R7kLm2Qx9Vb4Nz…", "…deploy token [REDACTED:secret]…"),
    ("…Nz8Wc1Yt6Hs3Jd9Kq2 and more", "…[REDACTED:secret] and more"),
    ("Bearer abcdef0123…", "Bearer [REDACTED:secret]…"),
    ("write to john.doe@exa…", "write to [REDACTED:email]…"),
    ("call +86 138 0013…", "call [REDACTED:phone]…"),
    ("at 2026-12-07 10…", "at 2026-12-07 10…"),  # a date cut short is no phone number
    ("…PaymentServiceImplementation", "…PaymentServiceImplementation"),  # nor a long word a secret's end
    ("…handle_user_request_v2_internal", "…handle_user_request_v2_internal"),  # nor an identifier
    ("…3f2a9c1e-4b5d-4e6f-8a9b-0c1d2e3f4a5b", "…3f2a9c1e-4b5d-4e6f-8a9b-0c1d2e3f4a5b"),  # nor a UUID
    ("…years 1990-1999…", "…years 1990-1999…"),  # nor a year range a phone number
    ("…wJalrXUtnFEMI/K7MDENG/bPxRfiCY", "…[REDACTED:secret]"),  # an AWS secret's end
    ("key sk_live_4eC39Hq…", "key [REDACTED:secret]…"),
    ("alerts go to https://hooks.slack.com/services/T024BE7LD/B0…", "alerts go to [REDACTED:secret]…"),  # a webhook cut short
    ("Authorization: Basic dXNl…", "Authorization: Basic [REDACTED:secret]…"),
    # Whole, in names with a prefix, and in the shapes of other providers.
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS_SECRET_ACCESS_KEY=[REDACTED:secret]"),
    ("DB_PASSWORD=hunter2hunter2", "DB_PASSWORD=[REDACTED:secret]"),
    ('{"db_password": "s3cr3t"}', '{"db_password": "[REDACTED:secret]"}'),
    # A name of more than 64 characters: no word start in it but its first, where the name was looked for up to 64.
    ("MY_APPLICATION_NAME_FOR_THE_PRODUCTION_DEPLOYMENT_OF_THE_BILLING_DATABASE_PASSWORD=hunter2hunter2",
     "MY_APPLICATION_NAME_FOR_THE_PRODUCTION_DEPLOYMENT_OF_THE_BILLING_DATABASE_PASSWORD=[REDACTED:secret]"),
    ("max_tokens=100 auth_token_count: 5", "max_tokens=100 auth_token_count: 5"),  # counts, not secrets
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED:api_key]"),
    ("glpat-AbCdEfGhIjKlMnOpQrStUv", "[REDACTED:token]"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED:token]"),
    ("STRIPE_SECRET_KEY=abcvalue987654ZZ", "STRIPE_SECRET_KEY=[REDACTED:secret]"),
    ("whsec_abcdefghij0123456789ABCD", "[REDACTED:token]"),
    ("glptt-abcdefghij0123456789 gldt-abcdefghij0123456789ab", "[REDACTED:token] [REDACTED:token]"),
    ("hf_" + "a1B2c3D4e5" * 4, "[REDACTED:token]"),
    ("SG.abcdefghij0123456789.abcdefghij0123456789xyz", "[REDACTED:api_key]"),
    ("https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "[REDACTED:token]"),
    ("gsk_" + "a1B2c3D4e5" * 5, "[REDACTED:api_key]"),
    ("mysql -u root -pS3cretPass! db", "mysql -u root -p[REDACTED:secret] db"),
    ("deploy --password hunter2 --token=abc123", "deploy --password [REDACTED:secret] --token=[REDACTED:secret]"),
    ("call 1381234…", "call [REDACTED:phone]…"),
    # Ordinary text and code left as it is.
    ("Basic configuration is in settings.py", "Basic configuration is in settings.py"),
    ("def login(user: str, password: str) -> bool:", "def login(user: str, password: str) -> bool:"),
    ("if not token: raise", "if not token: raise"),
    ("api_key=None", "api_key=None"),
    ("token = request.headers.get('x')", "token = request.headers.get('x')"),
    ("…React18StrictModeCompat", "…React18StrictModeCompat"),
    ("…/home/user/projects/MyProject2/src/Main.java", "…/home/user/projects/MyProject2/src/Main.java"),
    ("pip install sk-learn-compat-layer-module-v2", "pip install sk-learn-compat-layer-module-v2"),
]


@pytest.mark.parametrize("text, expected", CASES, ids=[c[0][:24] for c in CASES])
def test_redact_text(text, expected):
    assert redact_text(text) == expected


# Addresses in any script: the whole address is masked, not only its ASCII end ("jöhn[REDACTED:email]" was), and a
# local part starts where its script's word does: after CJK text written without a space, a Latin one starts after it.
UNICODE_EMAILS = [
    ("mail jöhn@example.com now", "mail [REDACTED:email] now"),
    ("Kontakt: jürgen.müller@münchen.de.", "Kontakt: [REDACTED:email]."),
    ("jo\u0308hn@example.com", "[REDACTED:email]"),  # "jöhn" decomposed (NFD): o and a combining diaeresis
    ("Пишите на иван.петров@почта.рф", "Пишите на [REDACTED:email]"),
    ("邮箱：张三@example.com，谢谢", "邮箱：[REDACTED:email]，谢谢"),
    ("联系 王小明@例子.中国 即可", "联系 [REDACTED:email] 即可"),
    ("田中太郎@例え.jp", "[REDACTED:email]"),
    ("ops@example.xn--p1ai", "[REDACTED:email]"),  # an IDN top-level domain written in punycode
    ("见jöhn@x.com", "见[REDACTED:email]"),  # the CJK word before it is not its local part
    ("请写信给jöhn@münchen.de见面", "请写信给[REDACTED:email]见面"),  # nor the CJK word after it its domain
    ("(jöhn@münchen.de)", "([REDACTED:email])"),
    # A local part longer than RFC 5321's 64 characters, as reply addresses have: masked whole, not left as it was.
    ("reply to reply+" + "AGLS5WQXKZ3BXEFWHQ5BRCGF3Y7JKEVBNHHKDQ2MZU" * 2 + "@reply.github.com.", "reply to [REDACTED:email]."),
    ("from bounces+" + "a1b2c3d4" * 12 + "-x.example.org@em.sendgrid.net today", "from [REDACTED:email] today"),
    # Cut short by a preview: the start of the address, whatever its script.
    ("write to jöhn@exa…", "write to [REDACTED:email]…"),
    ("write to jürgen@münch…", "write to [REDACTED:email]…"),
    ("邮箱：张三@例…", "邮箱：[REDACTED:email]…"),
    # Ordinary text with non-ASCII letters and at signs stays as it is.
    ("café@home is closed on Mondays", "café@home is closed on Mondays"),
    ("用户@张三 说：好的", "用户@张三 说：好的"),
    ("naïve résumé, see @mention", "naïve résumé, see @mention"),
]


@pytest.mark.parametrize("text, expected", UNICODE_EMAILS, ids=[c[0][:24] for c in UNICODE_EMAILS])
def test_an_address_in_any_script_is_masked_whole(text, expected):
    assert redact_text(text) == expected


# Addresses with "=" in their local part, as bounce and forwarding addresses encode another address there (VERP,
# SRS, BATV): masked whole, not from the "=" on. An address field's name before "=" is no part of one: it stays.
EQUALS_EMAILS = [
    ("bounced: bounce-mc.us5_1234.5678-jane=example.com@mail.example.net today",
     "bounced: [REDACTED:email] today"),
    ("Return-Path: <list-bounces+jane.doe=example.com@lists.example.org>", "Return-Path: <[REDACTED:email]>"),
    ("forwarded by SRS0=HHH=TT=example.com=jane@forwarder.example.org.", "forwarded by [REDACTED:email]."),
    ("Return-Path: <prvs=4123abcd=jane@example.com>", "Return-Path: <[REDACTED:email]>"),
    ("jane=example.com@bounce.example.net", "[REDACTED:email]"),
    ("bounced: bounce-mc.us5_1234.5678-jane=example.com@mail.exa…", "bounced: [REDACTED:email]…"),
    # The name of the field it is assigned to stays.
    ("EMAIL=jane@example.com", "EMAIL=[REDACTED:email]"),
    ("export GIT_AUTHOR_EMAIL=jane.doe@example.com", "export GIT_AUTHOR_EMAIL=[REDACTED:email]"),
    ("git -c user.email=jane@example.com commit", "git -c user.email=[REDACTED:email] commit"),
    ("send --to=ops@example.com --cc=jane@example.com", "send --to=[REDACTED:email] --cc=[REDACTED:email]"),
    ("https://example.com/unsubscribe?email=jane@example.com&list=7",
     "https://example.com/unsubscribe?email=[REDACTED:email]&list=7"),
    ("reply_to=jane@exam…", "reply_to=[REDACTED:email]…"),
    # An "=" with no address after it is no part of one.
    ("a==b and x=1 @ 5", "a==b and x=1 @ 5"),
]


@pytest.mark.parametrize("text, expected", EQUALS_EMAILS, ids=[c[0][:24] for c in EQUALS_EMAILS])
def test_an_address_with_an_equals_sign_is_masked_whole(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize("text, left_out", [
    ("Never reply to bounce-mc.us5_1234.5678-jane=example.com@mail.example.net", ["bounce", "jane", "us5"]),
    ("Never mail SRS0=HHH=TT=example.com=jane@forwarder.example.org", ["srs0", "hhh", "jane"]),
])
def test_a_rules_id_names_no_part_of_an_address_with_an_equals_sign(text, left_out):
    from ctxtop.context.rules.naming import readable_id

    rule_id = readable_id(text)
    assert not any(word in rule_id for word in left_out), rule_id
    assert "email" in rule_id

# North American numbers written without "+1": the NANP shape (an area code and an exchange that start with 2-9,
# the groups set apart as people write them), so that other numbers with dashes and dots are not taken for one.
NANP_PHONES = [
    ("Call the front desk at (415) 555-2671 today", "Call the front desk at [REDACTED:phone] today"),
    ("customer phone: 415-555-2671", "customer phone: [REDACTED:phone]"),
    ("cell 415.555.2671.", "cell [REDACTED:phone]."),
    ("call +1 (415) 555-2671", "call [REDACTED:phone]"),
    ("toll-free 1-800-555-0199 or +1.212.555.0143", "toll-free [REDACTED:phone] or [REDACTED:phone]"),
    ('{"phone": "(212)555-0143", "name": "Jane"}', '{"phone": "[REDACTED:phone]", "name": "Jane"}'),
    ("tel:646-555-0100", "tel:[REDACTED:phone]"),
    # Not a phone number: ids, dates, versions, times, positions, hashes, digit runs, numbers outside the plan.
    ("order ORD-415-555-2671 shipped", "order ORD-415-555-2671 shipped"),
    ("invoice #2024-555-2671 and PO 415-555-26710", "invoice #2024-555-2671 and PO 415-555-26710"),
    ("released 2024-05-12, see 2024-05-12T10:30:00.123-07:00", "released 2024-05-12, see 2024-05-12T10:30:00.123-07:00"),
    ("upgrade to 10.15.7 or 415.555.2671.3", "upgrade to 10.15.7 or 415.555.2671.3"),
    ("app.py:415:555 and line 415, col 555", "app.py:415:555 and line 415, col 555"),
    ("sha 9f86d081-415-555-2671ab", "sha 9f86d081-415-555-2671ab"),
    ("id 4155552671 and 14155552671234", "id 4155552671 and 14155552671234"),
    ("123-456-7890 and 555-123-4567", "123-456-7890 and 555-123-4567"),  # area code, exchange starting with 1
    ("uuid 3f2a9c1e-415-555-2671-0c1d2e3f4a5b", "uuid 3f2a9c1e-415-555-2671-0c1d2e3f4a5b"),
    ("ip 192.168.100.2000 v415.555.2671", "ip 192.168.100.2000 v415.555.2671"),
    ("counts 250 300 1000 and 415 555 2671", "counts 250 300 1000 and 415 555 2671"),  # spaces alone: any numbers
    ("range 415-555.2671", "range 415-555.2671"),  # two signs: not as a number is written
]


@pytest.mark.parametrize("text, expected", NANP_PHONES, ids=[c[0][:24] for c in NANP_PHONES])
def test_a_north_american_number_without_plus_one_is_masked(text, expected):
    assert redact_text(text) == expected



def test_the_guards_phone_pattern_still_wants_a_plus_before_a_north_american_number():
    """Only --redact masks "415-555-2671": the audit's PHONE, which the guard asks or denies a tool call on under a
    rule against calling customers, would stop calls holding a part number or an id of that shape."""
    from ctxtop.context.audit.violations import PHONE

    assert PHONE.search("update SKU 415-555-2671 in stock.csv") is None
    assert PHONE.search("text +1 415-555-2671 the tracking link") is not None

# A phone number a cut shortened: its first digits are as much the number's as the whole ("+1 415…" showed them).
CUT_PHONES = [
    ("call +1 415…", "call [REDACTED:phone]…"),
    ("call +1 41…", "call [REDACTED:phone]…"),
    ("电话+8613…", "电话[REDACTED:phone]…"),
    ("call +1 (415) …", "call [REDACTED:phone]…"),
    ("拨打 +86 13…", "拨打 [REDACTED:phone]…"),
    ("dial +44 20…", "dial [REDACTED:phone]…"),
    ("手机13800…", "手机[REDACTED:phone]…"),
    ("手机 138001…", "手机 [REDACTED:phone]…"),
    ("call 138 001…", "call [REDACTED:phone]…"),
    ("call 138-0…", "call [REDACTED:phone]…"),
    ("call 138 0013 …", "call [REDACTED:phone]…"),
    ("call 86 138 00…", "call [REDACTED:phone]…"),
    # Three or four digits of a Chinese mobile number: after its country code, or after a word that says what it is.
    ("+86 138…", "[REDACTED:phone]…"),
    ("拨打 86-138…", "拨打 [REDACTED:phone]…"),
    ("call 86 1380…", "call [REDACTED:phone]…"),
    ("0086-139…", "[REDACTED:phone]…"),
    ("客户手机 138…", "客户手机 [REDACTED:phone]…"),
    ("手机号码为1380…", "手机号码为[REDACTED:phone]…"),
    ("联系电话：139 …", "联系电话：[REDACTED:phone]…"),
    ("电话:13…", "电话:[REDACTED:phone]…"),
    ("Phone: 1380…", "Phone: [REDACTED:phone]…"),
    ("mobile no. 138-…", "mobile no. [REDACTED:phone]…"),
    ("tel. +86 138…", "tel. [REDACTED:phone]…"),
    ("WhatsApp 86 150…", "WhatsApp [REDACTED:phone]…"),
    # A North American number's bracketed area code, and its exchange begun.
    ("call (415) 555-…", "call [REDACTED:phone]…"),
    ("call (415) 555-26…", "call [REDACTED:phone]…"),
    ("call (415) 5…", "call [REDACTED:phone]…"),
    ("call 1 (415) 555…", "call [REDACTED:phone]…"),
    # Written with dashes, cut once its exchange is whole: the area code, the exchange and a dash.
    ("call 415-555-…", "call [REDACTED:phone]…"),
    ("call 415-555-26…", "call [REDACTED:phone]…"),
    ("call 1-800-555-0…", "call [REDACTED:phone]…"),
    ("phone:415-555-2…", "phone:[REDACTED:phone]…"),
    # Too little to be a phone number's, or another number's start.
    ("votes +1…", "votes +1…"),
    ("x = a+123…", "x = a+123…"),
    ("in 1995…", "in 1995…"),
    ("from 1990-1999…", "from 1990-1999…"),
    ("at 2026-12-07 13…", "at 2026-12-07 13…"),
    ("costs 2500…", "costs 2500…"),
    # Without a country code or a word before it, three or four digits are any number's: a year, a count, an amount.
    ("1380…", "1380…"),
    ("在 1995…", "在 1995…"),
    ("共 138…", "共 138…"),
    ("rows 1500…", "rows 1500…"),
    ("8613…", "8613…"),
    ("x86-138…", "x86-138…"),
    ("v1.86-138…", "v1.86-138…"),
    ("phones: 1…", "phones: 1…"),
    ("telephone 1995…", "telephone 1995…"),  # (a word that only ends in one)
    ("订单号码 138…", "订单号码 138…"),  # an order's number
    ("scores (200)…", "scores (200)…"),  # a bracketed number alone
    ("see f(415) 5…", "see f(415) 5…"),  # a call's argument
    ("(105) 555-…", "(105) 555-…"),  # no area code starts with 1
    ("order ORD-415-555-…", "order ORD-415-555-…"),  # an id's parts
    ("call 415-55…", "call 415-55…"),  # an exchange begun: a range's start as well (200-29…)
    ("mask 255.255.255.…", "mask 255.255.255.…"),  # dots: an address or a version as well
    ("from 2024-555-…", "from 2024-555-…"),  # four digits first
    ("id 415-105-…", "id 415-105-…"),  # no exchange starts with 1
    ("sha 9f86d081-415-555-…", "sha 9f86d081-415-555-…"),
]


@pytest.mark.parametrize("text, expected", CUT_PHONES, ids=[c[0][:24] for c in CUT_PHONES])
def test_a_phone_number_cut_short_is_masked(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize("said, phone, most", [
    ("Call the on-call engineer at +1 415 555 2671 before any deploy", "+1 415 555 2671", 2),
    ("Escalate to +44 20 7946 0958 if the nightly build breaks twice", "+44 20 7946 0958", 2),
    ("紧急情况请拨打 +86 138 0013 8000 找值班经理，不要发邮件", "+86 138 0013 8000", 2),
    # Without a "+", the first three or four digits are any number's ("150…", "in 1995…"): a carrier's prefix.
    ("客户手机 13800138000，只能通过企业微信联系", "13800138000", 4),
    ("Ring the warehouse on 139-1234-5678 before shipping", "139-1234-5678", 4),
    # After a word naming a phone number, or China's country code set apart, no more than its first digit.
    ("客户手机号 13800138000，只能通过企业微信联系", "13800138000", 1),
    ("Call the driver on mobile 139-1234-5678 after six", "139-1234-5678", 1),
    ("Escalations go to 86-138-0013-8000 at night only", "86-138-0013-8000", 3),
])
def test_a_cut_anywhere_in_a_phone_number_leaves_none_of_it_but_a_prefix(said, phone, most):
    """Every cut a preview may make of a rule that states a phone number: what --redact leaves of the number."""
    from ctxtop.context.sanitize import cut

    digits = [i for i, ch in enumerate(phone) if ch.isdigit()]
    starts = [phone[: digits[n] + 1] for n in range(most, len(digits))]  # the number up to one digit more than `most`
    for width in range(1, len(said) + 2):
        shown = redact_text(cut(said, width))
        assert not any(start in shown for start in starts), shown


def test_a_long_run_of_dotted_words_is_redacted_in_time_that_grows_with_it():
    """Every "." in "a.a.a." was a place an address could start, each searched to the run's end: 100,000 of them
    took 8 s. A local part is at most 64 characters."""
    import time

    started = time.monotonic()
    redact_text("a." * 200_000 + "a@example.com")
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("text", ["sha256-" + "9f86d081884c7d65-" * 3000, "a-" * 20_000], ids=["hashes", "letters"])
def test_a_long_run_of_hyphenated_words_is_redacted_in_time_that_grows_with_it(text):
    """A secret's name ("DB_PASSWORD=", "x-api-key:") was looked for from every word start of a hyphenated run to
    its end: 10,000 of them took 3.6 s, where the detail pane redacts 60,000 characters at each selection."""
    import time

    started = time.monotonic()
    assert redact_text(text + " db-password=hunter2") == text + " db-password=[REDACTED:secret]"
    assert time.monotonic() - started < 3


def test_redact_walks_json_values_and_keeps_them_valid():
    value = {"a": ["x@y.io", {"b": "password: 'p'"}], "n": 3, "t": True, "z": None}
    assert redact(value) == {"a": ["[REDACTED:email]", {"b": "password: '[REDACTED:secret]'"}], "n": 3, "t": True, "z": None}


def test_export_check_and_preview_redact_everything_they_write(capsys):
    pin = ["--pin", "Never write to ops@example.com or 13800138000"]
    assert main(["export", "--demo", *pin]) == 0
    assert "13800138000" in capsys.readouterr().out  # without --redact, the log's words as they are
    for argv in (["export"], ["export", "--format", "md"], ["check"], ["check", "--json"], ["preview", "--json"],
                 ["export", "--strategies"]):
        code = main([*argv, "--demo", "--redact", *pin])
        out = capsys.readouterr().out
        assert code in (0, 1), argv
        assert "13800138000" not in out and "ops@example.com" not in out, argv
        assert "REDACTED:phone" in out or argv[0] == "preview", argv
        if "--json" in argv or argv == ["export"]:
            json.loads(out)  # still valid JSON


def test_a_secret_cut_short_in_a_preview_is_still_masked(tmp_path, capsys):
    from ..conftest import DATA

    token = "ghp_R7kLm2Qx9Vb4Nz8Wc1Yt6Hs3Jd5Pf0Ag7Eu"
    text = (DATA / "claude_compact.jsonl").read_text()
    for lead in range(0, 200, 7):  # the preview's cut falls somewhere inside the token for some of these
        log = tmp_path / f"lead{lead}.jsonl"
        log.write_text(text.replace("Never push to main.", "Never push to main. " + "x" * lead + " deploy token " + token))
        for argv in (["export", "--compaction", "1"], ["export"], ["export", "--format", "md"], ["check"], ["check", "--json"]):
            main([*argv, str(log), "--redact", "--pin", "Never push to main."])
            out = capsys.readouterr().out
            assert not any(token[:n] in out for n in range(8, len(token) + 1)), (lead, argv)
            assert not any(token[-n:] in out for n in range(12, len(token) + 1)), (lead, argv)


def test_an_email_cut_before_its_at_sign_shows_none_of_its_local_part(tmp_path, capsys):
    """A preview cut inside an address's local part left "oyelaran.vant…", which --redact cannot tell from a word."""
    from ctxtop.context.output.compaction import PREVIEW_CHARS

    from ..conftest import DATA

    local, address = "oyelaran.vantreight", "oyelaran.vantreight@example.org"
    text = (DATA / "claude_compact.jsonl").read_text()
    said = "Never push to main. The release notes go out on Friday, "
    lead_in = " and mail "
    at_cut = PREVIEW_CHARS - 1 - len(said) - len(lead_in)  # the filler that puts the address's start at the cut
    filler = "after the checks have passed on the release branch " * 4
    shown_previews = []
    for lead in range(at_cut - len(local) - 2, at_cut + 3):  # the cut falls after the "@", inside the local part, before it
        log = tmp_path / f"lead{lead}.jsonl"
        log.write_text(text.replace("Never push to main.", said + filler[:lead].strip() + lead_in + address + " first."))
        for argv in (["export", "--compaction", "1"], ["export", "--compaction", "1", "--format", "md"], ["export"],
                     ["check", "--json"]):
            main([*argv, str(log), "--redact", "--pin", "Never push to main."])
            out = capsys.readouterr().out
            assert not any(local[:n] in out for n in range(3, len(local) + 1)), (lead, argv)
        main(["export", "--compaction", "1", str(log)])
        previews = [block["preview"] for block in json.loads(capsys.readouterr().out)["blocks"]]
        shown_previews += [p for p in previews if p.startswith("Never push to main.")]
    # Without --redact too, a preview cut in the local part stops before the address; one cut after its "@" is as it was.
    assert any(p.endswith(" and mail …") for p in shown_previews)
    assert any(p.endswith(f" and mail {local}@e…") for p in shown_previews)
    assert not any(p.endswith(f"{local[:n]}…") for p in shown_previews for n in range(1, len(local) + 1))


@pytest.mark.parametrize(("text", "width", "expected"), [
    ("write to oyelaran.vantreight@example.org", 20, "write to …"),  # inside the local part: before the address
    ("write to oyelaran.vantreight@example.org", 30, "write to oyelaran.vantreight@…"),  # after its "@": --redact masks it
    ("write to oyelaran.vantreight today", 20, "write to oyelaran.v…"),  # a word, not an address
    ("oyelaran.vantreight@example.org", 10, "…"),
    ("short", 10, "short"),
    # The address --redact finds starts after the run the cut is in: after a sign, after a letter it does not take.
    ("mail -oyelaran.vantreight@example.org", 20, "mail -…"),
    ("cc +oyelaran.vantreight@example.org", 20, "cc +…"),
    ("x .oyelaran.vantreight@example.org", 20, "x .…"),
    ("see jö.oyelaran.vantreight@example.org", 20, "see …"),  # "jö." is the local part's start too
    # Local parts in other scripts: the cut falls before the address there too.
    ("write to oyelarän.vantreight@münchen.de", 20, "write to …"),
    ("见oyelaran.vantreight@example.org", 20, "见…"),
    ("写信给张三丰oyelaran@例子.中国", 8, "写信给张三丰…"),  # the CJK run is no part of the Latin local part after it
    ("bounced: bounce-jane=example.com@mail.example.net", 20, "bounced: …"),  # "=" in a local part
    ("set EMAIL=oyelaran.vantreight@example.org", 20, "set EMAIL=…"),  # the field's name is no part of it
])
def test_a_cut_never_falls_inside_an_address_local_part(text, width, expected):
    from ctxtop.context.sanitize import cut

    assert cut(text, width) == expected
    assert redact_text(cut(text, width)).count("oyelaran") == (1 if "today" in text else 0)


@pytest.mark.parametrize("text", ['{"api_key": "abcdefghij0123456789XYZ"}', "{'password': 'hunter2hunter2hunter2'}",
                                  'DB_PASSWORD="s3cretvalue-very-long" ./run'])
def test_a_quoted_secret_cut_before_its_closing_quote_shows_none_of_it(text):
    """A preview cut inside a quoted value ('{"api_key": "abcdefghij0123…') left the start of the secret: the
    quoted value's pattern wanted its closing quote, which the cut took away."""
    from ctxtop.context.sanitize import cut

    value = text.split("=" if "=" in text else ": ")[1].strip("{}'\" ./run")
    for width in range(1, len(text) + 2):
        shown = redact_text(cut(text, width))
        assert not any(value[:n] in shown for n in range(2, len(value) + 1)), shown


def test_the_constraints_pane_masks_a_rules_missing_facts_while_redacting():
    """With redaction on, the rule's text was masked but its missing facts, the rule's own words, were not:
    'missing: 13812345678' and 'missing: ghp_…' showed the phone number and the token in the Constraints pane."""
    from ctxtop.context.rules.constraints import make_constraint
    from ctxtop.tui.widgets.panels import rule_text

    phone, token = "13812345678", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    for said in (f"Call {phone} before deploying, never others", f"Use token {token} only"):
        constraint = make_constraint(said, "pin")
        row = {"missing_facts": constraint.facts, "found_in": []}
        shown = rule_text(constraint, True, row).plain
        assert "missing: " in shown and phone not in shown and token[:8] not in shown, shown
        assert phone in rule_text(constraint, False, row).plain or token[:8] in rule_text(constraint, False, row).plain


def test_a_rules_id_names_no_address_password_nor_key_that_redact_masks(capsys):
    """A rule's id is made from its text: 'Never send anything to boss.person@corp.com' was
    no-send-anything-boss-person, and 'password=hunter2xyz' gave password-hunter2xyz-db, in every output,
    where --redact cannot tell an id's words from others."""
    from ..conftest import DATA

    pins = ["Never send anything to boss.person@corp.com", "Always use password=hunter2xyz for the db",
            "Use AKIAIOSFODNN7EXAMPLE for uploads"]
    for argv in (["check"], ["check", "--json"], ["export", "--format", "md"], ["export"]):
        main([*argv, str(DATA / "claude_compact.jsonl"), "--redact", *(arg for pin in pins for arg in ("--pin", pin))])
        out = capsys.readouterr().out.casefold()
        assert "boss" not in out and "person" not in out and "hunter2" not in out and "akia" not in out, argv
        assert "no-send-anything-email" in out and "password-db" in out, argv


def test_a_key_in_a_rule_is_one_fact_masked_whole_where_a_compaction_loses_it(tmp_path, capsys):
    # The rule's facts held the key's body alone ("ABcd…" after "sk-proj-"): check --redact and export --redact
    # printed it among the missing facts, where no shape tells it for a key.
    key = "sk-proj-ABcd1234efGH5678ijKL9012mnOP"
    records = [
        {"type": "user", "sessionId": "s", "uuid": "u1", "message": {"role": "user", "content": (
            f"Deploy the site.\n- Never use the key {key} outside staging.\n- Keep the changelog.")}},
        {"type": "assistant", "sessionId": "s", "uuid": "a1", "message": {
            "id": "m1", "role": "assistant", "model": "claude-sonnet-4-5-20250929", "content": [{"type": "text", "text": "On it."}],
            "usage": {"input_tokens": 900, "output_tokens": 5}}},
        {"type": "system", "subtype": "compact_boundary", "sessionId": "s", "uuid": "b1", "compactMetadata": {"trigger": "auto"}},
        {"type": "user", "sessionId": "s", "uuid": "u2", "isCompactSummary": True, "message": {"role": "user", "content": (
            "This session is being continued from a previous conversation. Summary: deploy the site; never use the key "
            "outside staging; keep the changelog.")}},
    ]
    log = tmp_path / "session.jsonl"
    log.write_text("".join(json.dumps(record) + "\n" for record in records))
    assert main(["check", "--auto", "--redact", str(log)]) == 1
    out = capsys.readouterr().out
    assert "missing [REDACTED:api_key]" in out and "ABcd1234" not in out
    assert main(["export", "--redact", str(log), "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert "[REDACTED:api_key]" in out and "ABcd1234" not in out


@pytest.mark.parametrize("argv", [["export"], ["check"], ["preview"], ["check", "--demo", "--pins"]])
def test_an_error_naming_a_path_is_masked_under_redact_as_the_output_is(argv, capsys):
    # `export --redact /nope/bob@example.com` named the address on stderr, which a CI job's log shares as widely as the
    # output it masks (audit's errors were masked already).
    assert main([*argv, "/nope/bob@example.com", "--redact"]) == 2
    err = capsys.readouterr().err
    assert "[REDACTED:email]" in err and "bob@" not in err and err.count("\n") == 1
    assert main([*argv, "/nope/bob@example.com"]) == 2
    assert "bob@example.com" in capsys.readouterr().err  # without --redact, named as it is
