function calcTotalTax(items) {
  return items.reduce((s, it) => s + it.price * it.qty * (it.vat || 0), 0);
}

module.exports = { calcTotalTax };
