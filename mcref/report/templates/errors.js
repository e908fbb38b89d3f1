// First script of the page: its errors are written into the DOM (read by the tests with --dump-dom).
window.mcrefErrors = [];
window.onerror = function (msg, src, line) {
  window.mcrefErrors.push(msg + ' (' + line + ')');
  var e = document.getElementById('js-errors');
  if (e) { e.textContent = window.mcrefErrors.join('\n'); }
};
