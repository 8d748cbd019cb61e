# Helpers for tests/shell/*.sh: the man pages as CMakeLists.txt installs
# them. Source this file, then
#   man_install_list SOURCE_DIR
# prints one line a file under the installation prefix: a page,
#   share/man/man1/redlock-exec.1.gz
# or a link and the page it points to (every other name a page's NAME
# line gives),
#   share/man/man1/redlock-renew.1.gz redlock-acquire.1.gz
man_install_list() {
  local src=$1 page file name section other
  for page in "$src"/man/*.[1-8]; do
    file=${page##*/} name=${file%.*} section=${file##*.}
    echo "share/man/man$section/$file.gz"
    for other in $(sed -n '/^\.SH NAME$/,/ \\- /p' "$page" | sed 's/ \\- .*//; s/\\-/-/g' | grep -o 'redlock-[a-z]*'); do
      [ "$other" = "$name" ] || echo "share/man/man$section/$other.$section.gz $file.gz"
    done
  done
}
