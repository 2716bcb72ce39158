"""What an order line costs: its quantity × the price of one ({"quantity": 12, "unit_price": 450}), which a cap on an
order or a purchase caps. A price that is already a line's total ("total_price") is not multiplied."""

from __future__ import annotations

from typing import Any

from ctxtop.context.audit.money_words import is_amount_key, key_words, number_in, written_amount

_QUANTITY_WORDS = frozenset({"quantity", "qty", "quantities"})
_UNIT_PRICE_WORDS = frozenset({"price", "cost"})
_TOTAL_WORDS = frozenset({"total", "subtotal", "grandtotal", "amount", "sum"})


def line_total(node: dict[Any, Any]) -> tuple[str, float, str | None] | None:
    """What the line costs, how it was reckoned, and the currency its price was written in (if any)."""
    quantity = price = None
    for key, value in node.items():
        key = str(key)
        words = key_words(key)
        if quantity is None and (not words.isdisjoint(_QUANTITY_WORDS) or "数量" in key) and (number := number_in(value)) is not None:
            quantity = (key, number)
        elif (price is None and (not words.isdisjoint(_UNIT_PRICE_WORDS) and words.isdisjoint(_TOTAL_WORDS) or "单价" in key)
              and is_amount_key(key) and (written := written_amount(value)) is not None):
            price = (key, *written)
    if quantity is None or price is None:
        return None
    total = quantity[1] * price[1]
    return f"{quantity[0]} {quantity[1]:g} × {price[0]} {price[1]:g} = {total:g}", total, price[2]
