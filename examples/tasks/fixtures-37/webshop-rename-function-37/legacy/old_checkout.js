// pre-2023 checkout, kept for reference - do not edit
function calcTotal(lines) {
  return lines.reduce((s, l) => s + l.amount, 0);
}
