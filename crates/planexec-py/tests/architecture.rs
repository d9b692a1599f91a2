//! The shape of the Python package's native half, checked on its source as
//! every crate's is: no import circle between files and no function longer
//! than a screen. (The package's behaviour is tested by the pytest suite in
//! this folder, `scripts/python-tests.sh`.)

planexec_testkit::architecture_tests!();
