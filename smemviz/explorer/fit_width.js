// Fit the explorer's maps to the width they are given on the page (see _fit_width.py).
// the class of the explorer's outer box; smemviz/explorer/_fit_width.py names it too
const EXPLORER = "smemviz-explorer";

// Each map's drawing box has a fixed size: as a containment boundary, the
// text measurements plotly makes while redrawing lay out that box only, not
// the whole notebook page.
const CONTAIN_ID = "smemviz-contain-maps";
function containMaps() {
  if (document.getElementById(CONTAIN_ID)) return;
  const style = document.createElement("style");
  style.id = CONTAIN_ID;
  style.textContent = "." + EXPLORER + " .js-plotly-plot .svg-container { contain: strict; }";
  document.head.appendChild(style);
}

export default {
  render({ model, el }) {
    el.style.display = "none";
    containMaps();
    let stopped = false;
    let observer = null;
    const report = (root) => {
      const width = Math.floor(root.getBoundingClientRect().width);
      if (width < 100 || Math.abs(width - model.get("width")) < 3) return;  // hidden, or no real change
      model.set("width", width);
      model.save_changes();
    };
    const start = () => {
      if (stopped) return;
      const root = el.closest("." + EXPLORER);
      if (!root) { requestAnimationFrame(start); return; }  // not on the page yet
      observer = new ResizeObserver(() => report(root));
      observer.observe(root);
    };
    start();
    return () => { stopped = true; if (observer) observer.disconnect(); };
  },
};
