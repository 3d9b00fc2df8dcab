/* tessera-bench-replay SOCKET FRAME: the lightest possible local client (bench/tessera/remote-cli.py,
 * issue 20 §1). A static program (C-style, no C++ runtime use) that sends one request frame recorded from a real `tbatch` on
 * ctld's local socket (rpc/local_wire.h framing: 4-byte length, method name, request bytes) and
 * waits for the answer. Run by the same shell loop as tbatch and the floor, its rate is what
 * any local command could reach against this controller: the floor plus ctld's work for one
 * durable submission. Exit 0 when the answer's status code is 0. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int read_full(int fd, unsigned char* p, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

int main(int argc, char** argv) {
  static unsigned char frame[1 << 16], answer[1 << 16];
  if (argc != 3) {
    fprintf(stderr, "usage: tessera-bench-replay SOCKET FRAME\n");
    return 2;
  }
  int ff = open(argv[2], O_RDONLY);
  ssize_t len = ff < 0 ? -1 : read(ff, frame, sizeof frame);
  if (len <= 4) {
    fprintf(stderr, "tessera-bench-replay: cannot read a frame from %s\n", argv[2]);
    return 2;
  }
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a {};
  a.sun_family = AF_UNIX;
  strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
  if (connect(fd, (struct sockaddr*)&a, sizeof a) != 0 || write(fd, frame, (size_t)len) != len) {
    perror("tessera-bench-replay");
    return 1;
  }
  unsigned char hdr[4];
  if (read_full(fd, hdr, 4) != 0) return 1;
  size_t n = (size_t)hdr[0] | (size_t)hdr[1] << 8 | (size_t)hdr[2] << 16 | (size_t)hdr[3] << 24;
  if (n < 4 || n > sizeof answer || read_full(fd, answer, n) != 0) return 1;
  return answer[0] | answer[1] | answer[2] | answer[3] ? 1 : 0;  /* the status code */
}
