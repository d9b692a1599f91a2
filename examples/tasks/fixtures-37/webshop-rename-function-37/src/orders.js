// Order helpers for the bakery web shop
const { calcTotalTax } = require("./tax");

function calcTotal(items) {
  return items.reduce((sum, it) => sum + it.price * it.qty, 0);
}

function recalcTotal(order) {
  order.total = calcTotal(order.items) + calcTotalTax(order.items);
  return order;
}

module.exports = { calcTotal, recalcTotal };
