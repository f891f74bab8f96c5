// Package safefs writes files so that no other user can redirect the
// writes: not through a symbolic link planted where a file is about to be
// made, nor by owning or sharing the directory it goes in.
//
// A program that runs as root and writes into a directory a user names
// (a trace in /tmp/trace, a header with -o) must not follow a link another
// user left there: os.WriteFile would overwrite the link's target, any
// file on the system. Every file uebpf writes goes through this package:
//
//   - MakeDir creates or opens a directory, holds it open by descriptor
//     and checks it through that descriptor: the caller's own, writable by
//     no one else. Files are then made relative to the descriptor
//     (openat, renameat), so renaming the directory or a parent away
//     afterwards changes nothing: they go where the checks were made.
//   - Dir.Create makes a new file (O_CREAT|O_EXCL|O_NOFOLLOW), and
//     Dir.WriteFile replaces one atomically (a temporary file with a
//     random name made the same way, renamed over it).
//   - WriteFile writes a single output file a user names by path, the
//     CLI's -o: in a directory root or the caller owns, writable by others
//     only if sticky (as /tmp), never through a link at the path.
//
// While a path is walked, a symbolic link is followed only if root or the
// caller owns it: a link another user planted decides nothing. Refusals
// wrap ErrUnsafe and say which path, whose it is, and what to change.
//
// On Linux every step is made relative to a descriptor (O_PATH walks,
// openat, mkdirat, renameat, fstat). Elsewhere the package uses os.Root
// for the files in a directory and checks the directory through it; the
// links on the way there are checked by path before they are followed,
// which a user who can replace them between the check and the use could
// race.
package safefs
