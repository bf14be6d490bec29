// The explorer's map view: draws a plotly FigureWidget's figure with plotly.js
// and applies the widget's update messages straight to the graph.
//
// plotly.js comes as the widget's PLOTLY_TRAIT and is evaluated once per page
// (every map of every explorer shares it), after the widget has started:
// anywidget gives a widget's module two seconds to load and then drops every
// message to a widget that missed them, so the module itself stays small.
// Until the map is drawn its place says so; a map that cannot be drawn says
// why, on the page.
//
// It speaks FigureWidget's message protocol (the _py2js_* / _js2py_* traits),
// so the Python object stays a plotly FigureWidget. What it leaves out is the
// round of work plotly's own view does after every redraw: diffing the whole
// drawn figure against the widget's copy and sending plotly's defaults back
// to Python. Updates are acknowledged with empty deltas once the frame is
// painted, which keeps FigureWidget's edit bookkeeping (on_edits_completed)
// working. The explorer's own updates come as one custom message each
// (UPDATE_MESSAGE), applied like _py2js_update; they carry no edit ids, so
// there is nothing to acknowledge.

const PLOTLY_TRAIT = "_smemviz_plotly_js";
const PLOTLY_VERSION_TRAIT = "_smemviz_plotly_version";
let Plotly = null; // set once plotly.js is evaluated (every use comes after the first draw)

// plotly.js for this page, evaluated once per plotly version and shared by every map.
function plotlyFor(model) {
  const shared = (globalThis.__smemvizPlotly = globalThis.__smemvizPlotly || {});
  const version = model.get(PLOTLY_VERSION_TRAIT) || "unknown";
  if (!shared[version]) {
    const source = model.get(PLOTLY_TRAIT);
    if (!source) return Promise.reject(new Error("the widget carries no plotly.js"));
    // plotly.js as a CommonJS module, so it is bound here rather than found globally
    const text = `const module = { exports: {} };\n${source}\nexport default module.exports;`;
    const url = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
    shared[version] = import(/* webpackIgnore: true */ url).then((mod) => {
      URL.revokeObjectURL(url);
      return mod.default;
    });
  }
  return shared[version];
}

// A line in the map's place: "drawing", or why it could not be drawn.
function notice(el, text, failed) {
  let box = el.querySelector(":scope > .smemviz-map-notice");
  if (!box) {
    box = document.createElement("div");
    box.className = "smemviz-map-notice";
    el.prepend(box);
  }
  box.textContent = text;
  box.style.cssText = failed
    ? "color:#b71c1c;background:#ffebee;border:1px solid #ef9a9a;padding:6px 10px;font:13px sans-serif"
    : "color:#546e7a;padding:6px 10px;font:12px sans-serif";
  box.dataset.failed = failed ? "true" : "false";
  return box;
}

const UNDEFINED = "_undefined_"; // plotly's wire form of "leave this trace alone"
const UPDATE_MESSAGE = "smemviz_update"; // a custom message that is a _py2js_update
const INTERNAL = "_doNotReportToPy"; // marks our own edits, so their events are not echoed
const TYPED = {
  int8: Int8Array, int16: Int16Array, int32: Int32Array,
  uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array,
  float32: Float32Array, float64: Float64Array,
};

// -- wire format -> plain values --------------------------------------------------

function typedArray(v) {
  const Kind = TYPED[v.dtype];
  if (!Kind) return v;
  const view = v.buffer;
  return new Kind(view.buffer, view.byteOffset, view.byteLength / Kind.BYTES_PER_ELEMENT);
}

// Undefined markers become `undefined`, numpy buffers typed arrays; containers
// are copied only where something inside them changed.
function fromPy(v) {
  if (v === UNDEFINED) return undefined;
  if (v === null || typeof v !== "object") return v;
  if (v.buffer instanceof DataView && typeof v.dtype === "string") return typedArray(v);
  let out = v;
  for (const key of Object.keys(v)) {
    const item = v[key];
    if (item === UNDEFINED || (item !== null && typeof item === "object")) {
      const plain = fromPy(item);
      if (plain !== item) {
        if (out === v) out = Array.isArray(v) ? v.slice() : { ...v };
        out[key] = plain;
      }
    }
  }
  return out;
}

// -- the model's copy of the figure ----------------------------------------------
// Views made later (the output shown again) draw the figure as it is now, so
// every update is also applied to the model's _widget_data/_widget_layout,
// in place, as plotly's own widget does.

function pathKeys(path) {
  const keys = [];
  for (const part of String(path).split(".")) {
    const m = part.match(/^([^[\]]*)((?:\[\d+\])*)$/);
    if (!m) { keys.push(part); continue; }
    if (m[1]) keys.push(m[1]);
    for (const idx of m[2].matchAll(/\[(\d+)\]/g)) keys.push(Number(idx[1]));
  }
  return keys;
}

function setPath(target, path, value) {
  if (value === undefined) return;
  const keys = pathKeys(path);
  let obj = target;
  for (let i = 0; i < keys.length - 1; i++) {
    const key = keys[i];
    if (obj[key] === null || typeof obj[key] !== "object") {
      if (value === null) return; // nothing there to reset
      obj[key] = typeof keys[i + 1] === "number" ? [] : {};
    }
    obj = obj[key];
  }
  const last = keys[keys.length - 1];
  if (value !== null) obj[last] = value;
  else if (Array.isArray(obj) && typeof last === "number") obj.splice(last, 1);
  else delete obj[last];
}

function traceIndexes(indexes, data) {
  if (indexes === null || indexes === undefined) return data.map((_, i) => i);
  return Array.isArray(indexes) ? indexes : [indexes];
}

function applyRestyle(data, restyle, indexes) {
  const traces = traceIndexes(indexes, data);
  for (const [path, values] of Object.entries(restyle || {})) {
    if (path === INTERNAL) continue;
    traces.forEach((t, k) => {
      const v = Array.isArray(values) ? values[k % values.length] : values;
      if (data[t]) setPath(data[t], path, v);
    });
  }
}

function applyRelayout(layout, relayout) {
  for (const [path, value] of Object.entries(relayout || {})) {
    if (path !== INTERNAL) setPath(layout, path, value);
  }
}

function removeProps(obj, props) {
  for (const keys of props || []) {
    let o = obj;
    for (let i = 0; o && i < keys.length - 1; i++) o = o[keys[i]];
    if (o) delete o[keys[keys.length - 1]];
  }
}

function moveItems(list, from, to) {
  const moving = from.map((i) => list[i]);
  const rest = list.filter((_, i) => !from.includes(i));
  const order = to.map((t, k) => [t, moving[k]]).sort((a, b) => a[0] - b[0]);
  for (const [t, item] of order) rest.splice(t, 0, item);
  list.splice(0, list.length, ...rest);
}

const MESSAGES = [
  "_py2js_update", "_py2js_restyle", "_py2js_relayout", "_py2js_addTraces",
  "_py2js_deleteTraces", "_py2js_moveTraces", "_py2js_animate",
  "_py2js_removeLayoutProps", "_py2js_removeTraceProps",
];

function applyToModel(model, name, msg) {
  const data = model.get("_widget_data");
  const layout = model.get("_widget_layout");
  switch (name) {
    case "_py2js_update":
      applyRestyle(data, msg.style_data, msg.style_traces);
      applyRelayout(layout, msg.layout_data);
      break;
    case "_py2js_restyle": applyRestyle(data, msg.restyle_data, msg.restyle_traces); break;
    case "_py2js_relayout": applyRelayout(layout, msg.relayout_data); break;
    case "_py2js_addTraces": data.push(...msg.trace_data); break;
    case "_py2js_deleteTraces":
      [...msg.delete_inds].sort((a, b) => b - a).forEach((i) => data.splice(i, 1));
      break;
    case "_py2js_moveTraces": moveItems(data, msg.current_trace_inds, msg.new_trace_inds); break;
    case "_py2js_animate":
      traceIndexes(msg.style_traces, data).forEach((t, k) => {
        for (const [path, v] of Object.entries((msg.style_data || [])[k] || {})) setPath(data[t], path, v);
      });
      applyRelayout(layout, msg.layout_data);
      break;
    case "_py2js_removeLayoutProps": removeProps(layout, msg.remove_props); break;
    case "_py2js_removeTraceProps": removeProps(data[msg.remove_trace] || {}, msg.remove_props); break;
  }
}

// -- drawing -------------------------------------------------------------------------

function clone(v) {
  return typeof structuredClone === "function" ? structuredClone(v) : JSON.parse(JSON.stringify(v));
}

function drawToGraph(gd, name, msg) {
  const marked = (obj) => ({ ...(obj || {}), [INTERNAL]: true });
  switch (name) {
    case "_py2js_update":
      return Plotly.update(gd, marked(msg.style_data), marked(msg.layout_data),
        traceIndexes(msg.style_traces, gd.data));
    case "_py2js_restyle":
      return Plotly.restyle(gd, marked(msg.restyle_data), traceIndexes(msg.restyle_traces, gd.data));
    case "_py2js_relayout": return Plotly.relayout(gd, marked(msg.relayout_data));
    case "_py2js_addTraces": return Plotly.addTraces(gd, clone(msg.trace_data));
    case "_py2js_deleteTraces": return Plotly.deleteTraces(gd, msg.delete_inds);
    case "_py2js_moveTraces": return Plotly.moveTraces(gd, msg.current_trace_inds, msg.new_trace_inds);
    case "_py2js_animate":
      return Plotly.animate(gd, {
        data: msg.style_data, layout: msg.layout_data, traces: traceIndexes(msg.style_traces, gd.data),
      }, msg.animation_opts);
    default: return null; // the remove messages only tidy the model's copy
  }
}

function afterPaint(fn) {
  requestAnimationFrame(() => setTimeout(fn, 0));
}

// One map redrawn per painted frame, page-wide: when one update brings several
// maps (the byte map, the lifetime map, a step's map), each is on screen as
// soon as it is drawn instead of after all of them. A redraw that finds
// another one drawn since the last paint waits for that paint; updates keep
// their order.
const PAINT = (globalThis.__smemvizPaint = globalThis.__smemvizPaint || { waiting: false, queue: [] });

function drawInItsOwnFrame(fn) {
  if (PAINT.waiting || PAINT.queue.length) { PAINT.queue.push(fn); return; }
  drawThenPaint(fn);
}

function drawThenPaint(fn) {
  PAINT.waiting = true;
  try { fn(); } finally {
    afterPaint(() => {
      PAINT.waiting = false;
      const next = PAINT.queue.shift();
      if (next) drawThenPaint(next);
    });
  }
}

function newViewId() {
  return Math.random().toString(36).slice(2) + Date.now().toString(36);
}

// -- user interaction -> Python ----------------------------------------------------

function deviceState(event) {
  if (!event) return null;
  return {
    ctrl: event.ctrlKey, alt: event.altKey, shift: event.shiftKey, meta: event.metaKey,
    button: event.button, buttons: event.buttons,
  };
}

function pointsMessage(type, data) {
  const points = (data && data.points) || [];
  const msg = {
    event_type: type,
    points: {
      trace_indexes: points.map((p) => p.curveNumber),
      point_indexes: points.map((p) => (p.pointNumber !== undefined ? p.pointNumber : p.pointIndex)),
      xs: points.map((p) => (p.x === undefined ? null : p.x)),
      ys: points.map((p) => (p.y === undefined ? null : p.y)),
    },
    device_state: deviceState(data && data.event),
    selector: null,
  };
  if (data && data.range) {
    msg.selector = { type: "box", selector_state: { xrange: data.range.x, yrange: data.range.y } };
  } else if (data && data.lassoPoints) {
    msg.selector = { type: "lasso", selector_state: { xs: data.lassoPoints.x, ys: data.lassoPoints.y } };
  }
  return msg;
}

function isInternal(...objs) {
  return objs.some((o) => o && o[INTERNAL]);
}

// -- zoom ------------------------------------------------------------------------------
// The maps' ticks come from Python for the whole axis (KiB steps), and tiny
// bars are drawn wider than their size at that scale (layout.meta says how
// much). Zoomed in, the view puts its own power-of-two ticks on the visible
// range (bytes and hex for SMEM, column numbers for TMEM) and re-widens the
// bars for that range, so a 32 B region is to scale once there is room,
// and puts the barrier markers and their leader lines back over their own bytes;
// zoomed back out, Python's ticks and bars return.

const ZOOMED = 0.9; // a visible range under this share of the full axis counts as zoomed
const MAX_TICKS = 8;
const WIDENED = ["data", "aliased"]; // the traces whose bars have a minimum drawn width
// the marker trace, spread apart along the whole axis, and the leader lines from each
// spread marker to its bytes: zoomed in, both go back over the bytes (their customdata)
const SPREAD = ["small", "leaders"];

function zoomTickValues(lo, hi) {
  let step = 1;
  while ((hi - lo) / step > MAX_TICKS) step *= 2;
  const vals = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) vals.push(v);
  return [vals, step];
}

function zoomTickLabel(v, step, unit) {
  if (unit !== "B") return v.toLocaleString("en-US");
  if (step >= 1024 && v % 1024 === 0) return `${(v / 1024).toLocaleString("en-US")} KiB`;
  return `${v.toLocaleString("en-US")}<br>0x${v.toString(16)}`;
}

function refreshZoom(gd, model) {
  const meta = gd.layout.meta || {};
  const unit = meta.smemviz_unit;
  if (!unit || !gd._fullLayout || !gd._fullLayout.xaxis) return null;
  const full = (model.get("_widget_layout") || {}).xaxis || {};
  const [lo, hi] = gd._fullLayout.xaxis.range;
  const [f0, f1] = full.range || [lo, hi];
  const zoomed = hi - lo < ZOOMED * (f1 - f0);
  if (!zoomed && !gd.__smemvizZoomed) return null; // Python's ticks and bars are on screen
  gd.__smemvizZoomed = zoomed;
  const title = (full.title && full.title.text) || "";
  let layout;
  if (zoomed) {
    const [vals, step] = zoomTickValues(Math.max(0, lo), hi);
    layout = {
      "xaxis.tickvals": vals, "xaxis.ticktext": vals.map((v) => zoomTickLabel(v, step, unit)),
      "xaxis.title.text": title.replace(/ \(ticks in KiB\)$/, "") + (unit === "B" ? " (zoomed: bytes, hex)" : " (zoomed)"),
    };
  } else {
    layout = { "xaxis.tickvals": full.tickvals || null, "xaxis.ticktext": full.ticktext || null, "xaxis.title.text": title };
  }
  const pyData = model.get("_widget_data") || [];
  const indexes = [];
  const xs = [];
  const least = (hi - lo) * (meta.smemviz_min_bar || 0);
  gd.data.forEach((t, i) => {
    const widened = WIDENED.includes(t.meta);
    if (!(widened || SPREAD.includes(t.meta)) || !t.customdata) return;
    indexes.push(i);
    if (!zoomed) xs.push(fromPy((pyData[i] || {}).x) || t.x);
    else if (widened) xs.push(Array.from(t.customdata, (size) => (size > 0 ? Math.max(size, least) : 0)));
    else xs.push(Array.from(t.customdata)); // markers (and their leaders) back over the bytes they stand for
  });
  return Plotly.update(gd, { x: xs, [INTERNAL]: true }, { ...layout, [INTERNAL]: true }, indexes);
}

function wireEvents(gd, model, viewId) {
  const send = (trait, value) => { model.set(trait, value); model.save_changes(); };
  gd.on("plotly_restyle", (ev) => {
    if (!ev || isInternal(ev[0])) return;
    send("_js2py_restyle", { style_data: ev[0], style_traces: ev[1], source_view_id: viewId });
  });
  gd.on("plotly_relayout", (ev) => {
    if (!ev || isInternal(ev)) return;
    if (Object.keys(ev).some((k) => k.startsWith("xaxis.range") || k === "xaxis.autorange")) refreshZoom(gd, model);
    const relayout = { ...ev };
    delete relayout.lastInputTime;
    if (Object.keys(relayout).length) send("_js2py_relayout", { relayout_data: relayout, source_view_id: viewId });
  });
  gd.on("plotly_update", (ev) => {
    if (!ev || isInternal(ev.data, ev.layout)) return;
    send("_js2py_update", { style_data: ev.data, style_traces: null, layout_data: ev.layout, source_view_id: viewId });
  });
  for (const type of ["plotly_click", "plotly_hover", "plotly_unhover", "plotly_selected", "plotly_deselect"]) {
    gd.on(type, (ev) => send("_js2py_pointsCallback", pointsMessage(type, ev)));
  }
}

// -- the widget --------------------------------------------------------------------

export default {
  initialize({ model }) {
    model.on("msg:custom", (msg) => {
      if (msg && msg[UPDATE_MESSAGE]) applyToModel(model, "_py2js_update", clone(fromPy(msg)));
    });
    for (const name of MESSAGES) {
      model.on(`change:${name}`, () => {
        const msg = model.get(name);
        if (msg) applyToModel(model, name, clone(fromPy(msg)));
      });
    }
  },

  render({ model, el }) {
    const gd = document.createElement("div");
    el.appendChild(gd);
    const viewId = newViewId();
    let drawn = false;
    let stopped = false;
    let resizeFrame = 0;

    const acknowledge = (msg) => {
      if (msg.trace_edit_id === undefined && msg.layout_edit_id === undefined) return; // nothing to report
      afterPaint(() => {
        if (stopped) return;
        if (msg.trace_edit_id !== undefined) {
          model.set("_js2py_traceDeltas", { trace_deltas: [], trace_edit_id: msg.trace_edit_id });
        }
        if (msg.layout_edit_id !== undefined) {
          model.set("_js2py_layoutDelta", { layout_delta: {}, layout_edit_id: msg.layout_edit_id });
        }
        model.save_changes();
      });
    };

    // One message from Python, drawn; before the first draw the model's copy is what gets drawn.
    const apply = (name, raw) => {
      if (!raw || !drawn) return;
      const msg = fromPy(raw);
      if (msg.source_view_id && msg.source_view_id === viewId) return;
      drawInItsOwnFrame(() => {
        if (stopped) return;
        const done = drawToGraph(gd, name, msg);
        if (done) {
          Promise.resolve(done).then(() => {
            if (gd.__smemvizZoomed) refreshZoom(gd, model); // a new layout under a zoomed view
            acknowledge(msg);
          }, (err) => console.error("smemviz map:", err));
        }
      });
    };
    for (const name of MESSAGES) model.on(`change:${name}`, () => apply(name, model.get(name)));
    model.on("msg:custom", (msg) => { if (msg && msg[UPDATE_MESSAGE]) apply("_py2js_update", msg); });

    // Without a fixed width the figure follows its container.
    const observer = new ResizeObserver(() => {
      if (!drawn || gd.layout.width || resizeFrame) return;
      resizeFrame = requestAnimationFrame(() => {
        resizeFrame = 0;
        if (!stopped && el.isConnected) Plotly.Plots.resize(gd);
      });
    });

    // Draw once on the page, so plotly can measure its container and texts.
    const waiting = notice(el, "drawing the map…", false);
    const failed = (err) => {
      if (stopped) return;
      console.error("smemviz map:", err);
      notice(el, `smemviz: this map could not be drawn (${(err && err.message) || err}). `
        + "Run the cell again to redraw it.", true);
    };
    // The view is made before it is on the page, and may be in a hidden tab: plotly
    // measures its container and every text when it draws, and in a hidden element
    // all of them measure empty (a subtitle then lands above its title). So the
    // first draw waits until the element is shown.
    const shown = () => el.isConnected && el.getClientRects().length > 0;
    const onPage = () => new Promise((resolve) => {
      if (shown()) { resolve(); return; }
      const watch = new ResizeObserver(() => { if (shown() || stopped) { watch.disconnect(); resolve(); } });
      watch.observe(el);
      let tries = 0;
      const check = () => {
        if (stopped || shown()) { watch.disconnect(); resolve(); }
        else if (tries++ < 300) requestAnimationFrame(check); // then the observer alone (a hidden tab)
      };
      check();
    });
    const draw = () => {
      if (stopped) return null;
      const data = clone(fromPy(model.get("_widget_data")));
      const layout = clone(fromPy(model.get("_widget_layout")));
      if (!layout.height) layout.height = 360; // as plotly's own widget does
      const config = { ...(fromPy(model.get("_config")) || {}) };
      return Plotly.newPlot(gd, data, layout, config).then(() => {
        drawn = true;
        waiting.remove();
        wireEvents(gd, model, viewId);
        observer.observe(el);
      });
    };
    // the first draw too takes its own painted frame, page-wide: the maps of a page drawn back to
    // back in one chain of promises hold the page for seconds on a slow machine, and a widget
    // whose module loads meanwhile misses anywidget's 2 s start limit ("Failed to initialize
    // model"); between frames its module loads
    const drawInFrame = () => new Promise((resolve, reject) => {
      drawInItsOwnFrame(() => { try { resolve(draw()); } catch (err) { reject(err); } });
    });
    plotlyFor(model).then((P) => { Plotly = P; return onPage(); }).then(drawInFrame).catch(failed);

    return () => {
      stopped = true;
      observer.disconnect();
      if (resizeFrame) cancelAnimationFrame(resizeFrame);
      if (Plotly) Plotly.purge(gd);
    };
  },
};
