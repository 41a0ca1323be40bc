from typing import Any
def test_probe(new_page: Any) -> None:
    page = new_page("ar")
    page.wait_for_selector("#guest")
    print(page.evaluate("""async () => {
      const { h } = await import('/js/dom.js');
      const box = h('table', h('tr', h('td', h('bdi#a', '+10')), h('td', h('bdi#b', '-30'))));
      document.querySelector('main').replaceChildren(box);
      return ['a','b'].map(id => { const el = document.getElementById(id); const n = el.firstChild;
      const at = (i) => { const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i+1); return r.getBoundingClientRect().left; };
      return [id, el.outerHTML, at(0), at(1), getComputedStyle(el).direction, getComputedStyle(el).unicodeBidi]; })}"""))
