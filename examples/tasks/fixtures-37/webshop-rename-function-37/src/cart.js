const { calcTotal } = require("./orders");

function cartSummary(cart) {
  const total = calcTotal(cart.items);
  // calcTotal ignores delivery fees
  return { count: cart.items.length, total };
}

module.exports = { cartSummary };
