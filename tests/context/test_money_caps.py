"""Money caps judged against a tool call's amounts: which fields hold money, and how an amount is written."""

from __future__ import annotations

import time

import pytest

from ctxtop.context.audit.call_amounts import amounts_in
from ctxtop.context.audit.money_caps import money_cap
from ctxtop.context.audit.money_words import chinese_number, is_amount_key
from ctxtop.context.audit.violations import implied_checks
from ctxtop.context.guard.judge import judge_call
from ctxtop.context.rules.constraints import make_constraint


def breaks(rule: str, tool_input, tool: str = "mcp__shop__checkout") -> str:
    """What the guard says of a call under ``rule`` alone ("" when it breaks nothing)."""
    verdict = judge_call(tool, tool_input, [make_constraint(rule, "pin", id="cap")])
    return "; ".join(breach.detail for breach in verdict.breaches)


def put_to_review(rule: str, tool_input, tool: str = "mcp__shop__checkout") -> str:
    """What the guard says of a call under ``rule`` it could not judge ("" when it could)."""
    verdict = judge_call(tool, tool_input, [make_constraint(rule, "pin", id="cap")])
    return "; ".join(unchecked.detail for unchecked in verdict.unchecked)


@pytest.mark.parametrize("key, money", [
    ("amount", True), ("AMOUNT", True), ("refund_amount", True), ("totalPrice", True), ("grand-total", True),
    ("subtotal", True), ("unit_price", True), ("item_price", True), ("monthlyCost", True), ("金额", True), ("订单总价", True),
    ("checksum", False), ("summary_id", False), ("total_tokens", False), ("budget_tokens", False), ("maxTokens", False),
    ("total_lines", False), ("cost_ms", False), ("totalCount", False), ("price_id", False), ("amortization", False),
])
def test_a_field_holds_money_when_one_of_its_words_names_an_amount_and_none_counts_something_else(key, money):
    assert is_amount_key(key) is money
    assert bool(breaks("Never spend more than $500.", {key: 90000})) is money


# The input as the tool call's JSON text holds it: digits of other scripts, numerals, escapes, JSON's Infinity (which
# the cheap look for a digit before any decoding must let through; "\u" escapes written by a serializer that keeps
# the text ASCII).
@pytest.mark.parametrize("text, value", [
    ('{"amount": 900}', 900.0),
    ('{"amount": "٩٠٠"}', 900.0),  # Arabic-Indic digits
    ('{"amount": "９００"}', 900.0),  # full width
    ('{"amount": "九百"}', 900.0),
    (r'{"amount": "\u4e5d\u767e"}', 900.0),  # 九百, escaped
    (r'{"amount": "\u0039\u0030\u0030"}', 900.0),
    ('{"amount": Infinity}', float("inf")),
    ('{"path": "src/app.py", "pattern": "TODO"}', None),
])
def test_an_amount_is_found_however_its_digits_are_written(text, value):
    found, _ = amounts_in(text, "mcp__shop__checkout")
    assert [amount.value for amount in found] == ([value] if value is not None else [])


@pytest.mark.parametrize("tool_input, said", [
    ({"amount_cents": 160000}, "amount_cents 160000 = 1600 exceeds the cap 1500"),
    ({"amountMinor": 150001}, "amountMinor 150001 = 1500.01 exceeds the cap 1500"),
    ({"price_in_pence": "200000"}, "price_in_pence 200000 = 2000 exceeds the cap 1500"),
    ({"amount_cents": 140000}, ""),
    ({"totalCents": 150000}, ""),  # exactly the cap
    ({"amount": 1600}, "amount 1600 exceeds the cap 1500"),
    ({"budget": {"amount_micros": 1600000000}}, "amount_micros 1.6e+09 = 1600 exceeds the cap 1500"),  # millionths
    ({"budget_micros": 1400000000}, ""),
])
def test_an_amount_in_hundredths_or_millionths_is_compared_in_whole_units(tool_input, said):
    assert breaks("Per-day spend cap is 1.5k EUR", tool_input) == (f"mcp__shop__checkout: {said}" if said else "")


@pytest.mark.parametrize("tool, tool_input, said", [
    # A command names its amounts as a JSON body, an option or an assignment…
    ("Bash", {"command": """curl -X POST https://pay.example.com/v1/orders -d '{"amount": 450, "currency": "USD"}'"""}, "amount 450"),
    ("Bash", {"command": "curl https://pay.example.com/v1/charges -d amount=450 -d currency=usd"}, "amount 450"),
    ("Bash", {"command": "./buy.sh --sku GPU-4090 --total-price 3,100.00"}, "total-price 3100"),
    ("Bash", {"command": "TOTAL=$450 ./checkout.sh"}, "TOTAL 450"),
    ("Bash", {"command": "python pay.py --amount=1k"}, "amount 1000"),
    ("shell", {"command": ["bash", "-lc", "paycli charges create --amount 450"]}, "amount 450"),  # Codex: a list of arguments
    # … and a request body held as a string is the JSON it is.
    ("WebFetch", {"url": "https://erp.example.com/orders", "body": '{"order": {"total": "$450"}}'}, "total 450"),
    ("mcp__http__request", {"method": "POST", "payload": '[{"price": 450}]'}, "price 450"),
    # Its other numbers are no money, nor are amounts a call writes into a file.
    ("Bash", {"command": "kill -9 45000 && lsof -i :8080 && sed -n '4500,9000p' orders.log"}, ""),
    ("Bash", {"command": "curl 'https://api.example.com/orders?since=1733568000&page_size=1000&amount_min=100'"}, ""),
    ("Bash", {"command": "./buy.sh --amount 250 --retries 900"}, ""),
    ("Write", {"file_path": "fixtures/order.json", "content": '{"amount": 12600}'}, ""),
    ("Edit", {"file_path": "pay.sh", "old_string": "--amount 10", "new_string": "--amount 12600"}, ""),
])
def test_an_amount_a_command_or_a_request_body_names_is_judged(tool, tool_input, said):
    assert breaks("Never spend more than $300 in one go.", tool_input, tool) == (f"{tool}: {said} exceeds the cap 300" if said else "")


@pytest.mark.parametrize("tool_input, said", [
    ({"items": [{"sku": "CHAIR", "quantity": 12, "unit_price": 450}]}, "quantity 12 × unit_price 450 = 5400"),
    ({"line_items": [{"qty": 3, "price": "$900"}, {"qty": 4, "price": "$600"}]}, "2 lines' quantity × price summed = 5100"),
    ({"商品": [{"数量": 20, "单价": 300}]}, "数量 20 × 单价 300 = 6000"),
    ({"items": [{"quantity": 2, "unit_price": 450}], "total": 900}, ""),
    ({"items": [{"quantity": 12, "total_price": 450}]}, ""),  # a line's total is not multiplied again
    ({"items": [{"quantity": 5000, "sku": "BOLT"}]}, ""),  # a quantity alone is no money
    ({"items": [{"quantity": 12, "weight_kg": 450}]}, ""),
])
def test_an_order_line_costs_its_quantity_times_its_unit_price(tool_input, said):
    assert breaks("Max order value: 4,999.99 USD", tool_input) == (f"mcp__shop__checkout: {said} exceeds the cap 4999.99" if said else "")


def cap_of(rule: str) -> float | None:
    caps = [check for kind, check in implied_checks(make_constraint(rule, "pin")) if kind == "cap"]
    return caps[0].amount if caps else None


@pytest.mark.parametrize("rule, currency", [
    ("Don't spend more than $500", "$"), ("max €2k per purchase", "EUR"), ("keep each invoice under 1,000 GBP", "GBP"),
    ("预算上限 8000 元", "CNY"), ("¥500 max", "¥"), ("Orders over 50,000 JPY: ask first", "JPY"), ("每单不得高于 800 美元", "USD"),
    ("spending limit: 300 dollars/day", "$"), ("budget cap 8000, stop and ask", None), ("预算上限 8000", None),
])
def test_a_cap_on_money_is_read_with_its_currency(rule, currency):
    caps = [check for kind, check in implied_checks(make_constraint(rule, "pin")) if kind == "cap"]
    assert (caps[0].currency.label if caps[0].currency else None) == currency


@pytest.mark.parametrize("rule, cap", [
    ("The per-order ceiling is 5000 USD; ask before going past it.", 5000),
    ("Spending threshold: 1,200 EUR per week", 1200),
    ("Don't let any single transaction go beyond 2000 EUR.", 2000),
    ("Ask me before paying any invoice of $750 or more.", 750),
    ("Invoices of 300 CHF and above need my approval", 300),
    ("Orders over 50,000 JPY: ask first", 50000),
    ("人民币 1 万以内的订单可以直接下，超过要问我", 10000),
    ("5000元以上的订单需要先问我", 5000),
    ("单笔不能超过 800 欧元", 800),
    # No currency: a verb after the number says it counts nothing ("over 1000 needs"), where "3 retries" counts retries.
    ("Any purchase over 1000 needs my approval", 1000),
    ("Refunds above 250 require a manager", 250),
    ("An order over 5000 must be approved by me", 5000),
    ("Ask before more than 3 retries or more", None),  # "or more" after a count, not an amount
    ("Any retry over 3 needs a new ticket", None),
    ("Retry at most 3 times beyond the first attempt.", None),
])
def test_a_cap_on_money_is_read_however_it_is_worded(rule, cap):
    assert cap_of(rule) == cap


@pytest.mark.parametrize("rule, amount", [("Never spend more than $800.", "950 美元"), ("单笔不能超过 800 元", "人民币 9000"),
                                          ("Orders over 800 JPY: ask first", "JPY 12000"), ("Invoices of 800 CHF and above", "1,200 CHF"),
                                          ("Never spend more than 800.", "1,200 CHF")])  # (a cap in no currency: the call's)
def test_an_amount_in_a_currency_written_out_is_read(rule, amount):
    assert breaks(rule, {"amount": amount}).endswith("exceeds the cap 800")


@pytest.mark.parametrize("rule, tool_input, said", [
    ("Never spend more than $500.", {"amount": "€450"}, "amount 450 EUR"),
    ("Never spend more than $500.", {"amount": "¥3000"}, "amount 3000 ¥"),
    ("Never spend more than $500.", {"amount": 60000, "currency": "JPY"}, "amount 60000 JPY"),
    ("Never spend more than £200.", {"price": "US$180"}, "price 180 USD"),  # a dollar with its country: not the pound
    ("Never spend more than 500 USD.", {"price": "HK$4,000"}, "price 4000 HKD"),
    ("Never spend more than $500.", {"order": {"lines": [{"qty": 2, "price": 300}], "currency": "eur"}}, "price 300 EUR"),
    ("Never spend more than $500.", {"amount": "450", "currency": "INR"}, "amount 450 INR"),  # a code ctxtop has no sign for
    ("预算上限 8000 元，超过需要先问我", {"amount": 1200, "currency": "USD"}, "amount 1200 USD"),
    ("Orders over 50,000 JPY: ask first", {"amount": "$400"}, "amount 400 $"),
])
def test_an_amount_in_another_currency_than_the_caps_is_put_to_review_not_compared(rule, tool_input, said):
    # No exchange rates: 450 EUR is neither over nor under $500. Compared as numbers, a call in yen passed a cap in dollars
    # as broken, one in dollars passed a cap in yen as kept; it is put to the user instead, the guard asking.
    assert breaks(rule, tool_input) == ""
    review = put_to_review(rule, tool_input)
    assert review.startswith(f"mcp__shop__checkout: {said} is in another currency than the cap ") and "exchange rate" in review


@pytest.mark.parametrize("rule, tool_input", [
    ("预算上限 8000 元，超过需要先问我", {"amount": "¥9000"}),  # ¥ is the yuan's sign as well as the yen's
    ("Refund up to ¥300 on your own", {"amount": 480, "currency": "CNY"}),
    ("Never spend more than $500.", {"amount": 900, "currency": "USD"}),
    ("Never spend more than $500.", {"amount": {"value": "900", "currency_code": "usd"}}),
    ("Never spend more than 500 dollars.", {"amount": "900 CAD"}),  # a dollar: the cap's "dollars" say not whose
    ("Never spend more than $500.", {"amount": "US$900"}),
    ("Never spend more than 500 CAD.", {"amount": "C$900"}),
    ("Never spend more than $500.", {"amount": 300, "currency": "EUR", "fee": {"amount": 900, "currency": "USD"}}),
])
def test_an_amount_that_may_be_in_the_caps_currency_is_compared(rule, tool_input):
    assert "exceeds the cap" in breaks(rule, tool_input) and put_to_review(rule, tool_input) == ""


def test_an_amount_over_the_cap_in_its_currency_breaks_it_whatever_else_the_call_pays():
    call = {"amount": 900, "currency": "USD", "fee": {"amount": 5, "currency": "EUR"}}
    assert breaks("Never spend more than $500.", call) == "mcp__shop__checkout: amount 900 exceeds the cap 500"
    assert put_to_review("Never spend more than $500.", call) == ""  # (broken: nothing left to ask about)


@pytest.mark.parametrize("command, said", [
    ("http POST :8000/api/purchase sku=LAPTOP-X quantity:=2 unit_price:=250", "quantity 2 × unit_price 250 = 500"),
    ("http POST shop.example.com/orders amount:=450", "amount 450"),
    ("http POST shop.example.com/orders total=450 currency=USD", "total 450"),
    ("https POST shop.example.com/orders qty:=3 price:='\"$200\"'", "qty 3 × price 200 = 600"),
    ("node -e \"shop.orders.create({amount: 450, currency: 'usd'})\"", "amount 450"),
])
def test_httpie_fields_and_object_literals_name_a_commands_amounts(command, said):
    assert breaks("Never spend more than $300 in one go.", {"command": command}, "Bash") == f"Bash: {said} exceeds the cap 300"


@pytest.mark.parametrize("command", [
    "http POST :8000/api/purchase sku=LAPTOP-X quantity:=2 unit_price:=99",
    "http GET shop.example.com/orders page==900 limit:=900",
    "echo 'total: 900 lines' | wc -l",
])
def test_httpie_fields_that_are_no_money_or_under_the_cap_break_nothing(command):
    assert breaks("Never spend more than $300 in one go.", {"command": command}, "Bash") == ""




@pytest.mark.parametrize("command, broken", [
    # A command that only searches, edits or prints text pays nothing, as a Write of the same text does not: an agent
    # at work on a shop's code greps, seds and commits its amounts all day.
    ('grep -rn "amount=900" src/', False),
    ('sed -i "s/amount=100/amount=900/" config.ini', False),
    ("echo '{\"amount\": 900}' > fixture.json", False),
    ('git commit -m "raise the default amount=900" && git log -S "amount=900" | head', False),
    ('cat > order.json <<EOF\n{"amount": 900}\nEOF', False),
    ('/usr/bin/grep amount=900 app.log | sort | uniq -c', False),
    # What reaches a program that may pay still counts, piped or after a text tool.
    ("echo '{\"amount\": 900}' | curl -d @- https://shop.example.com/pay", True),
    ('sed -i "s/a/b/" x.ini && curl -d amount=900 https://shop.example.com/pay', True),
    ('python - <<EOF\nshop.pay(amount=900)\nEOF', True),
    ('FOO=1 python pay.py --amount 900', True),
])
def test_a_command_that_only_handles_text_names_no_amount_it_pays(command, broken):
    assert bool(breaks("Never spend more than $500.", {"command": command}, "Bash")) is broken
    assert bool(breaks("Never spend more than $500.", {"command": ["bash", "-lc", command]}, "shell")) is broken  # Codex


def test_a_form_body_held_as_a_string_names_its_amounts():
    call = {"url": "https://pay.example.com/refunds", "body": "charge=ch_1&amount=450&currency=usd"}
    assert breaks("Never spend more than $300 in one go.", call, "WebFetch") == "WebFetch: amount 450 exceeds the cap 300"
    note = {"title": "cost fix", "body": "the total=450 was wrong"}  # a text, no form: its numbers are no amounts
    assert breaks("Never spend more than $300 in one go.", note, "mcp__github__create_issue") == ""


@pytest.mark.parametrize("tool, tool_input, said", [
    ("Bash", {"command": "curl https://api.stripe.com/v1/payment_intents -d amount=60000 -d currency=usd"}, "amount 60000 = 600"),
    ("Bash", {"command": "stripe payment_intents create --amount=60000 --currency=usd"}, "amount 60000 = 600"),
    ("Bash", {"command": "python -c \"import stripe; stripe.PaymentIntent.create(amount=60000, currency='usd')\""}, "amount 60000 = 600"),
    ("Bash", {"command": "node -e \"stripe.paymentIntents.create({amount: 60000, currency: 'usd'})\""}, "amount 60000 = 600"),
    ("WebFetch", {"url": "https://api.stripe.com/v1/refunds", "method": "POST", "body": "charge=ch_1&amount=60000"}, "amount 60000 = 600"),
    ("mcp__http__request", {"url": "https://api.stripe.com/v1/prices", "body": '{"unit_amount": 60000, "currency": "usd"}'},
     "unit_amount 60000 = 600"),
    ("mcp__stripe__create_refund", {"payment_intent": "pi_1", "amount": 60000}, "amount 60000 = 600"),
])
def test_an_amount_sent_to_stripe_is_in_the_currencys_smallest_unit(tool, tool_input, said):
    assert breaks("Never spend more than $500.", tool_input, tool) == f"{tool}: {said} exceeds the cap 500"


@pytest.mark.parametrize("tool, tool_input", [
    ("Bash", {"command": "curl https://api.stripe.com/v1/charges -d amount=45000 -d currency=usd"}),  # $450.00
    ("Bash", {"command": "python -c \"import stripe; stripe.PaymentIntent.create(amount=45000, currency='usd')\""}),
    ("WebFetch", {"url": "https://api.stripe.com/v1/charges", "body": '{"amount": 45000, "currency": "usd"}'}),
    ("mcp__stripe__create_refund", {"payment_intent": "pi_1", "amount": 45000}),
])
def test_an_amount_sent_to_stripe_under_the_cap_in_whole_units_keeps_it(tool, tool_input):
    assert breaks("Never spend more than $500.", tool_input, tool) == ""


@pytest.mark.parametrize("command, said", [
    # Zero-decimal currencies (Stripe's list): the yen has no smaller unit, 60000 is ¥60,000.
    ("curl https://api.stripe.com/v1/charges -d amount=60000 -d currency=jpy", "amount 60000"),
    ("curl https://api.stripe.com/v1/charges -u sk_test_x: -d amount=600000 -d currency=jpy", "amount 600000"),
    # Three-decimal ones are in thousandths: 60,000,000 fils are 60,000 (and the cap is in yen: put to review).
])
def test_an_amount_sent_to_stripe_in_a_zero_decimal_currency_is_in_whole_units(command, said):
    assert breaks("Orders over 50,000 JPY: ask first", {"command": command}, "Bash") == f"Bash: {said} exceeds the cap 50000"


def test_an_amount_sent_to_stripe_in_a_three_decimal_currency_is_in_thousandths():
    command = "curl https://api.stripe.com/v1/charges -d amount=600000 -d currency=kwd"
    assert breaks("Never spend more than 500.", {"command": command}, "Bash") == "Bash: amount 600000 = 600 exceeds the cap 500"


@pytest.mark.parametrize("tool, tool_input", [
    ("Bash", {"command": "git commit -m 'stripe: charges fixed' && ./pay.sh --amount 45000"}),  # Stripe named, not called
    ("Bash", {"command": "curl https://api.stripe.com.evil.example/v1/charges -d amount=45000"}),
    ("mcp__stripe__create_refund", {"payment_intent": "pi_1", "amount": "$45,000"}),  # written in whole units
    ("mcp__shop__checkout", {"note": "paid with stripe", "amount": 45000}),
])
def test_an_amount_not_sent_to_stripe_or_written_as_money_is_not_divided(tool, tool_input):
    assert "45000 exceeds the cap 500" in breaks("Never spend more than $500.", tool_input, tool)


def test_an_amount_with_a_fraction_sent_to_stripe_is_in_whole_units():
    # No count of cents has a fraction: a Stripe MCP server of another maker's that takes 612.50 takes dollars.
    call = {"payment_intent": "pi_1", "amount": 612.5}
    assert breaks("Never spend more than $500.", call, "mcp__stripe__create_refund") == \
        "mcp__stripe__create_refund: amount 612.5 exceeds the cap 500"


@pytest.mark.parametrize("rule, cap", [
    ("Stay within a token budget of 8000.", None),
    ("Error budget: no more than 50 per month", None),
    ("time budget max 900", None),
    ("上下文预算上限 8000", None),
    ("token 预算不超过 8000", None),
    ("预算文档不超过10页", None),
    ("报价单最多 20 行", None),
    ("采购审批最多 3 人", None),
    ("Marketing budget of 8000", 8000),  # a budget of money still caps
    ("预算上限 8000", 8000),
])
def test_a_budget_of_something_else_and_a_number_of_things_cap_no_money(rule, cap):
    assert cap_of(rule) == cap


@pytest.mark.parametrize("rule, cap", [
    ("Budget cap 500 per order", 500),
    ("spend at most 2000 per month", 2000),
    ("order budget max 800 each", 800),
    ("Never pay more than 250 without asking", 250),
    ("Never transfer more than 5k without my OK.", 5000),
    ("Never transfer more than 5 files without asking", None),  # files, not money
    ("Limit transfers to 3 per day", None),
    ("budget 1200 for the quarter", 1200),
    # A countable money word ("refunds", "orders", "payments") before "per": the number counts them.
    ("limit refunds to 3 per day", None),
    ("At most 3 orders per day", None),
    ("Limit payments to 5 per hour", None),
    ("token budget 8000 per session", None),
])
def test_a_cap_on_an_amount_of_money_holds_when_per_or_without_follows_its_number(rule, cap):
    assert cap_of(rule) == cap


@pytest.mark.parametrize("text, number", [
    ("五千", 5000), ("九千", 9000), ("一万二千", 12000), ("三千五", 3500), ("一万二", 12000), ("一千零五", 1005), ("十二", 12),
    ("两千五百", 2500), ("三十万", 300000), ("壹万贰仟", 12000), ("千", None), ("零", None), ("五千块钱", None),
])
def test_a_number_in_chinese_numerals_is_read(text, number):
    assert chinese_number(text) == number


@pytest.mark.parametrize("rule, cap", [
    ("单笔付款超过五千元必须先问我", 5000), ("每单不超过壹万元", 10000), ("预算上限两千五百美元", 2500),
    ("超过三次退款要问我", None), ("千元以内的小额采购可以直接下单", None), ("最多跟两个人一块做", None),
])
def test_a_cap_in_chinese_numerals_is_read(rule, cap):
    assert cap_of(rule) == cap


@pytest.mark.parametrize("amount, said", [("九千元", "amount 9000"), ("人民币壹万贰仟元整", "amount 12000"), ("七千", ""), ("一万二", "amount 12000")])
def test_an_amount_in_chinese_numerals_is_judged(amount, said):
    assert breaks("预算上限 8000 元，超过需要先问我", {"amount": amount}) == (f"mcp__shop__checkout: {said} exceeds the cap 8000" if said else "")


@pytest.mark.parametrize("rule, cap", [
    ("退款金额 500 元以下可以直接处理，超过的先找我", 500), ("¥2000及以下的采购不用问我", 2000),
    ("Approve on your own orders of $300 or below; bigger ones, ask", 300), ("最多 3 次以下", None),
])
def test_an_amount_one_may_go_up_to_caps_it(rule, cap):
    assert cap_of(rule) == cap


@pytest.mark.parametrize("rule, cap", [
    ("Keep the price list to at most 40 per page.", None), ("The cost dashboard shows at most 12 per row", None),
    ("预算文档最多 12", None), ("Budget review: at most 4 per quarter", None),
    ("Price cap 40 per unit", 40), ("Keep the budget at most 9000", 9000),
])
def test_a_thing_named_after_money_is_no_amount_of_it(rule, cap):
    assert cap_of(rule) == cap


# A hook answers within its latency budget whatever the call holds: no pattern may take time that grows faster than the
# input (each of these took from seconds to minutes, and a hook that times out lets the call through unjudged).
SPACES = " " * 100_000


@pytest.mark.parametrize("tool_input, said", [
    ({"note": SPACES, "amount": 9000}, "amount 9000"),
    ({"note": "1" + SPACES + "x", "total": "9000"}, "total 9000"),
    ({"note": "人民币" + SPACES + "五" + SPACES + "x", "amount": "$9,000"}, "amount 9000"),
    ({"amount": SPACES + "9000" + SPACES}, ""),  # (a string this long is no amount)
    # An input JSON cannot decode (nested past Python's decoder) is searched pair by pair: a long string of \" once.
    ("[" * 3000 + '"' + '\\"' * 50_000 + '", {"amount": 9000}' + "]" * 3000, "amount 9000"),
    ("[" * 3000 + '{"amount": 9000}, "' + '\\"' * 50_000 + "]" * 3000, "amount 9000"),  # (a string never closed)
], ids=["spaces", "a number then spaces", "a currency then spaces", "an amount padded", "a string of quotes", "never closed"])
def test_a_call_made_to_be_slow_to_judge_is_judged_quickly(tool_input, said):
    started = time.monotonic()
    assert breaks("Never spend more than $500.", tool_input) == (f"mcp__shop__checkout: {said} exceeds the cap 500" if said else "")
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("rule, cap", [
    ("Budget cap: " + "1" * 100_000, float("1" * 100_000)), ("1" * 100_000 + " apples", None),
    ("spend at most $" + "1," * 50_000 + "x", 1),
], ids=["a cap of many digits", "many digits", "many thousands"])
def test_a_rule_made_to_be_slow_to_read_is_read_quickly(rule, cap):
    started = time.monotonic()
    assert getattr(money_cap(rule), "amount", None) == cap
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("text, number", [
    ("一亿二千三百四十五万六千七百八十九", 123_456_789), ("一万亿", 1e12), ("三万五千亿", 3.5e12), ("一亿二千万", 1.2e8), ("五千万", 5e7),
])
def test_a_big_number_in_chinese_numerals_is_read_whole(text, number):
    assert chinese_number(text) == number


@pytest.mark.parametrize("amount", ["一亿二千三百四十五万六千七百八十九元", "一万亿元"])
def test_a_big_amount_in_chinese_numerals_is_over_the_cap(amount):
    # (17 numerals were no amount, and 一万亿 was read as 一万: both calls went through under a cap of 50,000)
    assert "exceeds the cap 50000" in breaks("单笔付款超过五万元必须先问我", {"amount": amount})


def test_the_audit_notes_an_amount_in_another_currency_without_failing():
    import json

    from ctxtop.context.audit.violations import checks_of, violations_of
    from ctxtop.parsers.model import TOOL_CALL, Block

    rule = make_constraint("Never spend more than $500.", "pin", id="cap")
    for tool_input, kinds in (({"amount": 450, "currency": "EUR"}, [("amount_not_compared", False)]),
                              ({"amount": 900, "currency": "USD"}, [("violation", True)]), ({"amount": 450}, [])):
        text = json.dumps(tool_input)
        alerts = violations_of(5, Block(TOOL_CALL, text, tool_name="pay"), text, checks_of([rule]))
        assert [(alert.kind.key, alert.fails) for alert in alerts] == kinds
