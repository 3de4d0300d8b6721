// The keeper: np-exec's own static binary as a warm sandbox's PID 1
// (core/warm.h), started by the sandbox's runtime in place of a program.
//
// It connects once to the rendezvous socket at kWarmTarget, whose holder on
// the host removes it at once, so nothing that runs later in the sandbox can
// reach the channel by any path; it is not dumpable, so no process of the
// sandbox can trace it, read its memory or take its descriptors; and as the
// namespace's init it receives no signal from inside it but the ones it
// handles, which are none. Then, one spawn at a time, the holder hands it a
// client's connection: the keeper reads the spawn (argv, directory, values,
// three descriptors) from it, runs the program in a session of its own,
// forwards the signals the client sends, and when the program has ended
// kills every process left, empties the scratch mounts (/tmp, HOME,
// /dev/shm) and removes the SysV IPC objects before it answers with the
// exit status. A client that goes away ends its spawn the same way. A reset
// that fails ends the keeper, and with it the sandbox.
#ifndef NP_EXEC_LAUNCHER_WARM_KEEPER_H_
#define NP_EXEC_LAUNCHER_WARM_KEEPER_H_

namespace np::warm {

// The keeper verb's body; returns its exit status.
int RunKeeper(char** envp);

}  // namespace np::warm

#endif  // NP_EXEC_LAUNCHER_WARM_KEEPER_H_
