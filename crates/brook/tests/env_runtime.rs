//! `BRT_RUNTIME` and `BRT_ADAPTER` choose the default device (their own process, since the
//! default device is chosen once).

use brook::{Device, DeviceKind};

#[test]
fn the_adapter_variable_picks_the_device_index() {
    std::env::set_var("BRT_RUNTIME", "interp");
    std::env::set_var("BRT_ADAPTER", "1");
    let device = Device::default_device();
    assert_eq!(device.kind(), DeviceKind::Interp);
    assert_eq!(device.info().ordinal, 1);
    assert_eq!(Device::current().info(), device.info());
    let from_thread = std::thread::spawn(|| Device::current().info().ordinal)
        .join()
        .expect("thread");
    assert_eq!(from_thread, 1, "a new thread starts on the default device");
}
