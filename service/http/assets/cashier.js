// Progressive additions to the cashier page, which works without them:
// copy buttons, the time left counting down, and following the order's
// status so the page changes by itself when the payment arrives. Words
// come from the page (the server's catalogue), never from here.
(function () {
  'use strict';

  document.querySelectorAll('button[data-copy]').forEach(function (button) {
    var target = document.getElementById(button.getAttribute('data-copy'));
    if (!target) { return; }
    button.hidden = false;
    button.setAttribute('aria-live', 'polite');
    var idle = button.textContent;
    button.addEventListener('click', function () {
      var text = target.textContent.trim();
      var show = function (label) {
        button.textContent = label;
        window.setTimeout(function () { button.textContent = idle; }, 2500);
      };
      var select = function () {
        var range = document.createRange();
        range.selectNodeContents(target);
        var selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        show(button.getAttribute('data-selected'));
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(function () {
          show(button.getAttribute('data-copied'));
        }, select);
      } else {
        select();
      }
    });
  });

  // The server rendered the seconds left when it sent the page; count
  // from there on this device's monotonic clock, in the page's digits,
  // and reload at zero so the server says what happened.
  var left = document.getElementById('time-left');
  if (left) {
    var total = parseInt(left.getAttribute('data-seconds'), 10) || 0;
    var digits = Array.from(left.getAttribute('data-digits') || '0123456789');
    var started = window.performance.now();
    var pad = function (n) { return n < 10 ? '0' + n : String(n); };
    var tick = function () {
      var s = Math.max(0, total - Math.floor((window.performance.now() - started) / 1000));
      var clock = s >= 3600
        ? Math.floor(s / 3600) + ':' + pad(Math.floor(s / 60) % 60) + ':' + pad(s % 60)
        : pad(Math.floor(s / 60)) + ':' + pad(s % 60);
      left.textContent = clock.replace(/[0-9]/g, function (d) { return digits[+d]; });
      left.setAttribute('datetime', 'PT' + s + 'S');
      if (s === 0) {
        window.setTimeout(function () { window.location.reload(); }, 1000);
      } else {
        window.setTimeout(tick, 1000);
      }
    };
    if (total > 0) { tick(); }
  }

  var sheet = document.querySelector('main[data-status-url]');
  if (!sheet) { return; }
  var shown = sheet.getAttribute('data-page') || '';
  var settled = /^(completed|expired|cancelled):/;
  if (settled.test(shown)) { return; }
  var poll = function () {
    fetch(sheet.getAttribute('data-status-url'), { cache: 'no-store', credentials: 'omit' })
      .then(function (response) { return response.json(); })
      .then(function (state) {
        if (state.page && state.page !== shown) {
          window.location.reload();
        } else {
          window.setTimeout(poll, 2000);
        }
      })
      .catch(function () { window.setTimeout(poll, 5000); });
  };
  window.setTimeout(poll, 2000);
}());
