chrome.alarms.onAlarm.addListener(() => {
  chrome.notifications.create({type: "basic", title: "Break time!", message: "Stretch your legs.", iconUrl: "icons/48.png"});
});
