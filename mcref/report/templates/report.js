// Sortable tables (click a header), the images' status and, under "#selftest", a check of the sort
// that writes its result into the page (read by the tests with --dump-dom).
(function () {
  function key(td) {
    var v = td.getAttribute('data-v');
    if (v === null) { v = td.textContent; }
    if (v === '') { return null; }
    var x = Number(v);
    return isNaN(x) ? v.toLowerCase() : x;
  }
  function cmp(a, b) {
    if (a === null && b === null) { return 0; }
    if (a === null) { return 1; }
    if (b === null) { return -1; }
    if (typeof a === typeof b) { return a < b ? -1 : (a > b ? 1 : 0); }
    return typeof a === 'number' ? -1 : 1;
  }
  function sortBy(table, col, dir) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (r, i) { r._i = i; });
    rows.sort(function (r1, r2) {
      var a = key(r1.cells[col]), b = key(r2.cells[col]);
      var c = (a === null || b === null) ? cmp(a, b) : dir * cmp(a, b);
      return c !== 0 ? c : r1._i - r2._i;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    var ths = table.tHead.rows[0].cells;
    for (var j = 0; j < ths.length; j++) { ths[j].removeAttribute('aria-sort'); }
    ths[col].setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
  }
  function init(table) {
    var ths = table.tHead.rows[0].cells;
    for (var j = 0; j < ths.length; j++) {
      (function (j) {
        ths[j].addEventListener('click', function () {
          var cur = ths[j].getAttribute('aria-sort');
          sortBy(table, j, cur === 'ascending' ? -1 : 1);
        });
      })(j);
    }
  }
  var tables = document.querySelectorAll('table.sortable');
  for (var i = 0; i < tables.length; i++) { init(tables[i]); }
  function column(table, name) {
    var ths = table.tHead.rows[0].cells;
    for (var j = 0; j < ths.length; j++) { if (ths[j].getAttribute('data-col') === name) { return j; } }
    return -1;
  }
  function values(table, col) {
    return Array.prototype.map.call(table.tBodies[0].rows, function (r) { return key(r.cells[col]); });
  }
  function selftest() {
    var t = document.getElementById('results');
    if (!t) { return; }
    var out = [];
    var c = column(t, 'estimate');
    var h = t.tHead.rows[0].cells[c];
    h.click();
    var v = values(t, c).filter(function (x) { return x !== null; });
    for (var i = 1; i < v.length; i++) { if (v[i - 1] > v[i]) { out.push('ascending sort broken at row ' + i); break; } }
    h.click();
    v = values(t, c).filter(function (x) { return x !== null; });
    for (i = 1; i < v.length; i++) { if (v[i - 1] < v[i]) { out.push('descending sort broken at row ' + i); break; } }
    var d = column(t, 'dataset');
    t.tHead.rows[0].cells[d].click();
    var s = values(t, d);
    for (i = 1; i < s.length; i++) { if (cmp(s[i - 1], s[i]) > 0) { out.push('text sort broken at row ' + i); break; } }
    document.getElementById('selftest').textContent = 'selftest: ' + (out.length ? out.join('; ') : 'ok') +
      ' (' + t.tBodies[0].rows.length + ' rows)';
  }
  window.addEventListener('load', function () {
    var imgs = document.images, ok = 0, bad = [];
    for (var i = 0; i < imgs.length; i++) {
      var im = imgs[i];
      im.setAttribute('data-natural-width', String(im.naturalWidth));
      if (im.complete && im.naturalWidth > 0) { ok++; } else { bad.push(im.getAttribute('src')); }
    }
    if (location.hash === '#selftest') {
      document.getElementById('img-status').textContent = 'images loaded: ' + ok + '/' + imgs.length +
        (bad.length ? ' (missing: ' + bad.join(', ') + ')' : '');
      selftest();
    }
  });
})();
