// Package safefstest plays another user in the tests of code that writes
// files: it plants links and files as user nobody (uid 65534) with
// setpriv, in directories others may write, next to a file only root may
// touch, so that a test can check that the file is still intact.
package safefstest
