#include "launcher/app.h"

int main(int argc, char** argv, char** envp) { return np::Main(argc, argv, envp); }
