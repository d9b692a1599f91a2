Hooks.once("ready", () => {
  console.log("Harrowfell maps ready");
});
