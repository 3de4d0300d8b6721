// np-exec's entry point as a function the tests can call: read host facts,
// parse, dispatch, turn an error into output and an exit status.
#ifndef NP_EXEC_LAUNCHER_APP_H_
#define NP_EXEC_LAUNCHER_APP_H_

namespace np {

int Main(int argc, char** argv, char** envp);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_APP_H_
