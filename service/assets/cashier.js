// Progressive additions to the cashier page, which works without them:
// copy buttons, and following the order's status so the page changes by
// itself when the payment arrives.
(function () {
  'use strict';

  document.querySelectorAll('button[data-copy]').forEach(function (button) {
    var target = document.getElementById(button.getAttribute('data-copy'));
    if (!target) { return; }
    button.hidden = false;
    button.setAttribute('aria-live', 'polite');
    button.addEventListener('click', function () {
      var text = target.textContent.trim();
      var show = function (label) {
        button.textContent = label;
        window.setTimeout(function () { button.textContent = 'Copy'; }, 2500);
      };
      var select = function () {
        var range = document.createRange();
        range.selectNodeContents(target);
        var selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        show('Selected: press Ctrl+C');
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(function () { show('Copied'); }, select);
      } else {
        select();
      }
    });
  });

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
