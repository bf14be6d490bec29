// The explorer's "Run on GPU" button (see _run_button.py). A click carries the
// controls' values as this page shows them: a control change the widget
// manager still holds back (it sends one change per control at a time and
// keeps the next until the kernel has taken the previous one) would otherwise
// reach the kernel after the click, and the run would measure the previous
// configuration.

async function valuesOnScreen(model) {
  const state = {};
  for (const [name, id, key] of model.get("controls")) {
    try {
      const control = await model.widget_manager.get_model(id);
      Object.assign(state, { [name]: control.serialize({ [key]: control.get(key) })[key] });
    } catch (error) {
      // the run then takes the value the kernel has
      console.error("smemviz: control " + name + " could not be read for the run", error);
    }
  }
  return state;
}

export default {
  render({ model, el }) {
    const button = document.createElement("button");
    button.className = "jupyter-button widget-button smemviz-run-button";
    const draw = () => {
      button.replaceChildren();
      const icon = model.get("icon");
      if (icon) {
        const glyph = document.createElement("i");
        glyph.className = "fa fa-" + icon;
        button.append(glyph, " ");
      }
      button.append(model.get("description"));
      button.title = model.get("tooltip");
      button.disabled = model.get("disabled");
    };
    const onClick = async (event) => {
      event.preventDefault();
      const state = await valuesOnScreen(model);
      model.send({ event: "click", state });
    };
    button.addEventListener("click", onClick);
    model.on("change:description", draw);
    model.on("change:tooltip", draw);
    model.on("change:icon", draw);
    model.on("change:disabled", draw);
    draw();
    el.append(button);
    return () => {
      button.removeEventListener("click", onClick);
      model.off("change:description", draw);
      model.off("change:tooltip", draw);
      model.off("change:icon", draw);
      model.off("change:disabled", draw);
    };
  },
};
